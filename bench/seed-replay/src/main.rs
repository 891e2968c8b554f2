//! Replays a kvtier store op trace (written by `dev.kvtier.bench.store.StoreOpTrace`, format in its Javadoc)
//! through the Rust seed's `TieredStore`, the module compiled unchanged (see build.rs), and prints what
//! `StoreTraceReplay` prints for the Java stores: ns per operation overall (wall and this thread's CPU time) and
//! per kind, and the checksum of the point answers, which must equal theirs.
//!
//! Usage: `seed-replay TRACE [warmups]` (build with `cargo build --release`). Each pass reads the trace afresh
//! (as the Java replayer does, whose keys cache their hashes); only the replay loops are timed, never the loading
//! or the setup registrations. `warmups` (default 1) passes of each loop run first on throwaway stores (no JIT here,
//! but the allocator and the page cache warm up as the JVM's do). The clean pass times the whole loop; the
//! per-op pass reads the clock around every operation and subtracts the clock's own cost, calibrated before.

#[allow(dead_code)]
mod tiered_storage {
    include!(concat!(env!("OUT_DIR"), "/tiered_storage.rs"));
}

use std::env;
use std::fs;
use std::process;
use std::time::Instant;
use tiered_storage::{SegmentMeta, Tier, TieredStore};

const REGISTER: u8 = 0;
const TOUCH: u8 = 1;
const GET: u8 = 2;
const DEMOTE: u8 = 3;
const PROMOTE: u8 = 4;
const REMOVE: u8 = 5;
const CANDIDATES: u8 = 6;
const KIND_LETTERS: &str = "RTGDPXQ";
const KIND_NAMES: [&str; 7] = ["register", "touch", "get", "demote", "promote", "remove", "candidates"];
const CHECKSUM_START: u64 = 0xcbf29ce484222325;
const CHECKSUM_PRIME: u64 = 0x100000001b3;
const MAGIC: &str = "kvtier-store-trace 1";

/// One operation; `key` is empty for a candidates query, `tier` unused where the operation names none.
struct Op {
    kind: u8,
    key: String,
    tier: Tier,
    start: usize,
    end: usize,
    bytes: usize,
}

struct Trace {
    gpu_budget: usize,
    cpu_budget: usize,
    setup: usize,
    ops: Vec<Op>,
}

fn fail(message: String) -> ! {
    eprintln!("seed-replay: {message}");
    process::exit(1);
}

fn tier_of(letter: &str) -> Result<Tier, String> {
    match letter {
        "G" => Ok(Tier::Gpu),
        "C" => Ok(Tier::Cpu),
        "D" => Ok(Tier::Disk),
        _ => Err(format!("tier must be G, C or D, was {letter}")),
    }
}

fn number(field: &str) -> Result<usize, String> {
    field.parse().map_err(|e| format!("{field} is no number ({e})"))
}

fn parse_op(line: &str) -> Result<Op, String> {
    let f: Vec<&str> = line.split(' ').collect();
    let kind = match KIND_LETTERS.find(f[0]) {
        Some(k) if f[0].len() == 1 => k as u8,
        _ => return Err(format!("unknown operation {}", f[0])),
    };
    let expected = match kind {
        REGISTER => 6,
        TOUCH | GET | REMOVE => 2,
        _ => 3,
    };
    if f.len() != expected {
        return Err(format!("{expected} fields expected, {} found", f.len()));
    }
    let mut op = Op { kind, key: String::new(), tier: Tier::Gpu, start: 0, end: 0, bytes: 0 };
    match kind {
        REGISTER => {
            op.key = f[1].to_string();
            op.start = number(f[2])?;
            op.end = number(f[3])?;
            op.bytes = number(f[4])?;
            op.tier = tier_of(f[5])?;
        }
        DEMOTE | PROMOTE => {
            op.key = f[1].to_string();
            op.tier = tier_of(f[2])?;
        }
        CANDIDATES => {
            op.tier = tier_of(f[1])?;
            op.bytes = number(f[2])?;
        }
        _ => op.key = f[1].to_string(),
    }
    Ok(op)
}

fn header<'a>(line: Option<&'a str>, name: &str, fields: usize, n: usize) -> Vec<&'a str> {
    let parts: Vec<&str> = line.map(|l| l.split(' ').collect()).unwrap_or_default();
    if parts.len() != fields || parts[0] != name {
        fail(format!("line {n} must be \"{name}\" and {} numbers, was {line:?}", fields - 1));
    }
    parts
}

fn read_trace(path: &str) -> Trace {
    let text = fs::read_to_string(path).unwrap_or_else(|e| fail(format!("cannot read {path}: {e}")));
    let mut lines = text.lines();
    let magic = lines.next();
    if magic != Some(MAGIC) {
        fail(format!("{path}: line 1 must be \"{MAGIC}\", was {magic:?}"));
    }
    let budgets = header(lines.next(), "budgets", 3, 2);
    let setup = header(lines.next(), "setup", 2, 3);
    let count = header(lines.next(), "ops", 2, 4);
    let parse = |f: &str| number(f).unwrap_or_else(|e| fail(format!("{path}: {e}")));
    let count = parse(count[1]);
    let mut ops = Vec::with_capacity(count);
    for (i, line) in lines.by_ref().take(count).enumerate() {
        ops.push(parse_op(line).unwrap_or_else(|e| fail(format!("{path}: line {} \"{line}\": {e}", i + 5))));
    }
    if ops.len() != count {
        fail(format!("{path}: {} operations, {count} announced", ops.len()));
    }
    Trace { gpu_budget: parse(budgets[1]), cpu_budget: parse(budgets[2]), setup: parse(setup[1]), ops }
}

/// Distinct for every tier and access count, never 0 (StoreTraceReplay.segmentCode).
fn segment_code(seg: &SegmentMeta) -> u64 {
    1 + seg.tier as u64 + 3 * seg.access_count
}

fn fold(checksum: u64, kind: u8, code: u64) -> u64 {
    (checksum ^ (code << 3 | kind as u64)).wrapping_mul(CHECKSUM_PRIME)
}

/// Operation `op`'s answer code; a candidates query adds its count to `named` and answers 0.
#[inline(always)]
fn apply(store: &mut TieredStore, op: &mut Op, named: &mut usize) -> u64 {
    match op.kind {
        REGISTER => {
            let meta = SegmentMeta::new(std::mem::take(&mut op.key), op.start..op.end, op.bytes);
            store.register(meta, op.tier) as u64
        }
        TOUCH => store.touch(&op.key) as u64,
        GET => store.get(&op.key).map_or(0, segment_code),
        DEMOTE => store.demote(&op.key, op.tier).map_or(0, |t| 1 + t.from as u64),
        PROMOTE => store.promote(&op.key, op.tier).map_or(0, |t| 1 + t.from as u64),
        REMOVE => store.remove(&op.key).map_or(0, |s| segment_code(&s)),
        _ => {
            *named += store.candidates_for_demotion(op.tier, op.bytes).len();
            0
        }
    }
}

fn set_up(trace: &mut Trace) -> TieredStore {
    let mut store = TieredStore::new(trace.gpu_budget, trace.cpu_budget);
    let mut named = 0;
    for (i, op) in trace.ops[..trace.setup].iter_mut().enumerate() {
        if op.kind != REGISTER || apply(&mut store, op, &mut named) != 1 {
            fail(format!("setup operation {i} is no registration that fits"));
        }
    }
    store
}

/// The clean pass: returns (checksum, keys named by candidate queries).
fn replay(store: &mut TieredStore, trace: &mut Trace) -> (u64, usize) {
    let mut checksum = CHECKSUM_START;
    let mut named = 0;
    for op in trace.ops[trace.setup..].iter_mut() {
        let code = apply(store, op, &mut named);
        if op.kind != CANDIDATES {
            checksum = fold(checksum, op.kind, code);
        }
    }
    (checksum, named)
}

/// The per-op pass: adds each kind's nanoseconds to `nanos`.
fn replay_timing_each(store: &mut TieredStore, trace: &mut Trace, nanos: &mut [u64; 7]) -> u64 {
    let mut checksum = CHECKSUM_START;
    let mut named = 0;
    for op in trace.ops[trace.setup..].iter_mut() {
        let start = Instant::now();
        let code = apply(store, op, &mut named);
        nanos[op.kind as usize] += start.elapsed().as_nanos() as u64;
        if op.kind != CANDIDATES {
            checksum = fold(checksum, op.kind, code);
        }
    }
    std::hint::black_box(named);
    checksum
}

fn clock_cost() -> f64 {
    let reads = 2_000_000u64;
    let mut sum = 0u64;
    for _ in 0..reads {
        let start = Instant::now();
        sum += start.elapsed().as_nanos() as u64;
    }
    sum as f64 / reads as f64
}

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, time: *mut Timespec) -> i32;
}

/// This thread's CPU time in ns (Linux CLOCK_THREAD_CPUTIME_ID; std only, so declared here).
fn thread_cpu_nanos() -> u64 {
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut t = Timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec, which `t` is, laid out as the C struct on 64-bit Linux.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut t) };
    if rc != 0 {
        fail("clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed".to_string());
    }
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

fn main() {
    let args: Vec<String> = env::args().collect();
    if args.len() < 2 || args.len() > 3 {
        eprintln!("usage: seed-replay TRACE [warmups]");
        process::exit(2);
    }
    let path = &args[1];
    let warmups: usize = args.get(2).map_or(1, |w| number(w).unwrap_or_else(|e| fail(e)));

    let load_start = Instant::now();
    let mut warm = read_trace(path);
    let load_ms = load_start.elapsed().as_secs_f64() * 1e3;
    for w in 0..warmups {
        if w > 0 {
            warm = read_trace(path); // registrations took their keys
        }
        let mut store = set_up(&mut warm);
        std::hint::black_box(replay(&mut store, &mut warm));
        drop(store);
        warm = read_trace(path);
        let mut store = set_up(&mut warm);
        std::hint::black_box(replay_timing_each(&mut store, &mut warm, &mut [0; 7]));
    }
    drop(warm);
    let clock = clock_cost();

    let mut trace = read_trace(path);
    let mut store = set_up(&mut trace);
    let cpu_start = thread_cpu_nanos();
    let wall_start = Instant::now();
    let (checksum, named) = replay(&mut store, &mut trace);
    let wall = wall_start.elapsed().as_nanos() as f64;
    let cpu = (thread_cpu_nanos() - cpu_start) as f64;
    drop(store);
    drop(trace);

    let mut again = read_trace(path);
    let mut store = set_up(&mut again);
    let mut nanos = [0u64; 7];
    let checksum_each = replay_timing_each(&mut store, &mut again, &mut nanos);
    if checksum_each != checksum {
        fail(format!("the per-op pass's checksum {checksum_each:016x} differs from the clean pass's {checksum:016x}"));
    }

    let mut counts = [0u64; 7];
    for op in &again.ops[again.setup..] {
        counts[op.kind as usize] += 1;
    }
    let ops = (again.ops.len() - again.setup) as f64;
    println!(
        "store rust-seed, trace {path}: {} setup registrations, {} timed operations",
        again.setup,
        again.ops.len() - again.setup
    );
    println!("load {load_ms:.0} ms, {warmups} warm-up pass(es) of each loop");
    println!(
        "clean pass: wall {:.1} ms = {:.1} ns/op, thread cpu {:.1} ms = {:.1} ns/op",
        wall / 1e6,
        wall / ops,
        cpu / 1e6,
        cpu / ops
    );
    println!("per-op pass (clock read {clock:.1} ns subtracted per op):");
    let total: f64 = nanos.iter().map(|&n| n as f64).sum::<f64>() - clock * ops;
    let mut result = format!(
        "RESULT store=rust-seed ops={} wall_ns_op={:.1} cpu_ns_op={:.1}",
        again.ops.len() - again.setup,
        wall / ops,
        cpu / ops
    );
    for k in 0..7 {
        let per_op = if counts[k] == 0 { 0.0 } else { nanos[k] as f64 / counts[k] as f64 - clock };
        println!(
            "  {:<10} {:>9} ops {:>10.1} ns/op {:>6.1}% of the time",
            KIND_NAMES[k],
            counts[k],
            per_op,
            100.0 * (nanos[k] as f64 - clock * counts[k] as f64) / total
        );
        result.push_str(&format!(" {}={:.1}", KIND_NAMES[k], per_op));
    }
    println!("checksum {checksum:016x}, candidates named {named}");
    println!("{result} checksum={checksum:016x}");
}
