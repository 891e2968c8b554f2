//! Brings the Rust seed's `tiered_storage.rs` into the build unchanged but for its `//!` inner doc lines, which
//! cannot stand inside the module that `include!` puts it in (and whose doc example names a crate that does not
//! exist here). The seed lives outside the repository: `KVTIER_SEED_DIR` names its directory, by default
//! `../../../shared/seeds` from this project (`/work/shared/seeds` from the repository's `bench/seed-replay`).
use std::env;
use std::fs;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=KVTIER_SEED_DIR");
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let dir = match env::var_os("KVTIER_SEED_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => manifest.join("../../../shared/seeds"),
    };
    let seed = dir.join("tiered_storage.rs");
    println!("cargo:rerun-if-changed={}", seed.display());
    let text = fs::read_to_string(&seed).unwrap_or_else(|e| {
        panic!(
            "\n\nthe Rust seed {} cannot be read: {e}\nset KVTIER_SEED_DIR to the directory that holds \
             tiered_storage.rs (the seeds live outside the repository, e.g. /work/shared/seeds)\n\n",
            seed.display()
        )
    });
    let mut module = String::with_capacity(text.len());
    for line in text.lines() {
        if !line.trim_start().starts_with("//!") {
            module.push_str(line);
            module.push('\n');
        }
    }
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("tiered_storage.rs");
    fs::write(&out, module).unwrap_or_else(|e| panic!("cannot write {}: {e}", out.display()));
}
