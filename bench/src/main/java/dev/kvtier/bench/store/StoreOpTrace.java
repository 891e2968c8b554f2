package dev.kvtier.bench.store;

import dev.kvtier.bench.sim.ZipfSampler;
import dev.kvtier.store.Tier;
import dev.kvtier.tiering.BlockKeys;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * A deterministic serving trace of store operations, replayed unchanged by {@link StoreTraceReplay} (through
 * {@code TieredStore} and {@link SeedPortStore}) and by the Rust seed itself ({@code bench/seed-replay}), so the
 * three run exactly the same operations and their point answers can be compared by checksum. Generated data only.
 *
 * <h2>The serving mix</h2>
 * A prefix cache of {@code segments} KV blocks ({@value #TOKENS_PER_BLOCK} tokens each, {@link #SEGMENT_BYTES}
 * bytes: an 8B model in bf16 keeps 128 KiB of K and V per token), keyed as the prefix cache keys its blocks
 * ({@code "kvblock:"} and 32 hex digits, {@link BlockKeys#of}). The GPU holds {@value #GPU_PERCENT}% of them, the
 * CPU {@value #CPU_PERCENT}%, disk the rest. One percent of the blocks are shared system prompts (never removed);
 * the others are conversation blocks, whose popularity falls with their age: a block written by the last turn is
 * the likeliest to be read by the next one. Each step draws one of (shares of steps):
 * <ul>
 *   <li><b>use</b> (66.87%): a block is read by a request: a shared one with probability 0.2 (Zipf, exponent 1,
 *       over the shared blocks), else a conversation block by Zipf (exponent 1) over its age rank, newest first. On
 *       the GPU it is a {@code touch}; elsewhere it is a {@code promote} to the GPU, preceded by the
 *       {@code demote}s that make room (a GPU victim to the CPU, and first a CPU victim to disk when the CPU is
 *       full). 0.5% of uses touch a block removed a little earlier (a request racing the block's expiry): false.</li>
 *   <li><b>get</b> (25%): a prefix lookup of a block drawn as above; 3% of lookups ask for a block never cached
 *       (a new prompt): absent.</li>
 *   <li><b>register</b> (4%): a new conversation block written on the GPU, after making room as above.</li>
 *   <li><b>remove</b> (4%): the oldest conversation block expires, wherever it is. Registers and removes keep the
 *       population within 1% of {@code segments}.</li>
 *   <li><b>candidates</b> (0.13%, which is 0.1% of the operations): {@code candidatesForDemotion} for {@value #CANDIDATE_SEGMENTS} blocks' worth of
 *       bytes, on the GPU (3 in 4) or the CPU: a monitor or bulk eviction asking the policy's view.</li>
 * </ul>
 * Victims are chosen by the generator itself, by sampled least-recent use (the oldest last use among
 * {@value #VICTIM_SAMPLES} random residents of the tier, as Redis samples): the trace is <b>open loop</b>, no
 * operation depends on what a store answers, so every implementation runs the same operations; the candidate
 * answers are computed by the replayers but never acted on (they differ between policies, and even between two
 * runs of the seed, which breaks ties in its hash map's random order). The generator keeps its own model of where
 * each block is (the seed's rules, equal sizes), so the demotes and promotes it writes are the ones a serving
 * engine would issue and succeed on every correct store. What comes out at the defaults (10^5 segments, 1.1 M
 * operations, seed 42) is 41.5% touch, 19.8% get, 21.2% demote, 11.2% promote, 3.1% register, 3.1% remove and
 * 0.10% candidates (the generator prints the counts): a use finds its block on the GPU 79% of the time (the
 * simulator's generated chat trace at a 5% GPU budget: 68%), and each miss moves two or three blocks.
 * With {@code candidates} off the candidate queries are drawn and dropped, so the point operations are the same
 * ones, in the same order, as in the trace with them (the two traces).
 *
 * <h2>File format</h2>
 * Text, US-ASCII, one item per line, fields separated by one space:
 * <pre>
 * kvtier-store-trace 1
 * budgets GPU_BYTES CPU_BYTES
 * setup S              the first S operations register the initial population (replayers do not time them)
 * ops M                M operations follow, setup included
 * R KEY START END BYTES TIER   register (positions [START, END)); TIER is G, C or D
 * T KEY                touch
 * G KEY                get
 * D KEY TIER           demote to TIER
 * P KEY TIER           promote to TIER
 * X KEY                remove
 * Q TIER NEEDED        candidatesForDemotion(TIER, NEEDED bytes)
 * </pre>
 *
 * <p>Usage: {@code java -cp benchmarks.jar dev.kvtier.bench.store.StoreOpTrace OUT [segments] [ops] [seed]
 * [candidates on|off]} (defaults 100000, 1100000, 42, on); {@code ops} counts the timed operations, candidate
 * queries included even when they are dropped.
 *
 * <p>Immutable once built; its arrays are shared with the replayers of this package, which only read them.
 * Not meant for other threads while being built.
 */
public final class StoreOpTrace {
    static final byte REGISTER = 0;
    static final byte TOUCH = 1;
    static final byte GET = 2;
    static final byte DEMOTE = 3;
    static final byte PROMOTE = 4;
    static final byte REMOVE = 5;
    static final byte CANDIDATES = 6;
    /** The file's letter of each kind, by kind. */
    static final String KIND_LETTERS = "RTGDPXQ";
    /** The printed name of each kind, by kind. */
    static final String[] KIND_NAMES = {"register", "touch", "get", "demote", "promote", "remove", "candidates"};
    /** The file's letter of each tier, by ordinal. */
    static final String TIER_LETTERS = "GCD";

    static final int TOKENS_PER_BLOCK = 16;
    static final long SEGMENT_BYTES = TOKENS_PER_BLOCK * 128L * 1024;
    static final int GPU_PERCENT = 10;
    static final int CPU_PERCENT = 30;
    static final int CANDIDATE_SEGMENTS = 4;
    static final int VICTIM_SAMPLES = 4;
    /**
     * The share of steps that query candidates: a step that makes room writes more than one operation (about 1.27
     * per step at the defaults), so this is 0.1% of the operations.
     */
    private static final double CANDIDATE_STEPS = 0.0013;
    private static final String MAGIC = "kvtier-store-trace 1";

    final long gpuBudget;
    final long cpuBudget;
    /** The first {@code setup} operations register the initial population. */
    final int setup;
    final byte[] kinds;
    /** Null for {@link #CANDIDATES}. */
    final String[] keys;
    /** The target tier's ordinal for register, demote, promote and candidates; -1 for the others. */
    final byte[] tiers;
    /** Register's positions; 0 for the others. */
    final int[] starts;
    final int[] ends;
    /** Register's size, candidates' bytes needed; 0 for the others. */
    final long[] bytes;

    private StoreOpTrace(long gpuBudget, long cpuBudget, int setup, byte[] kinds, String[] keys, byte[] tiers,
            int[] starts, int[] ends, long[] bytes) {
        this.gpuBudget = gpuBudget;
        this.cpuBudget = cpuBudget;
        this.setup = setup;
        this.kinds = kinds;
        this.keys = keys;
        this.tiers = tiers;
        this.starts = starts;
        this.ends = ends;
        this.bytes = bytes;
    }

    /** Operations in all, setup included. */
    int size() {
        return kinds.length;
    }

    /** How many operations of each kind follow the setup, by kind. */
    long[] countsByKind() {
        long[] counts = new long[KIND_NAMES.length];
        for (int i = setup; i < kinds.length; i++) {
            counts[kinds[i]]++;
        }
        return counts;
    }

    /**
     * Generates the trace described in the class comment.
     *
     * @param segments   the population, at least 100
     * @param ops        timed operations to draw, at least 1 (fewer are kept when {@code candidates} is false)
     * @param seed       the seed: one seed, one trace
     * @param candidates whether the candidate queries are kept
     * @throws IllegalArgumentException if {@code segments} or {@code ops} is out of range
     */
    static StoreOpTrace generate(int segments, int ops, long seed, boolean candidates) {
        if (segments < 100) {
            throw new IllegalArgumentException("segments must be at least 100, was " + segments);
        }
        if (ops < 1) {
            throw new IllegalArgumentException("ops must be at least 1, was " + ops);
        }
        return new Generator(segments, seed, candidates).run(ops);
    }

    /** The model behind {@link #generate}: where the generator has put each block, and the operations so far. */
    private static final class Generator {
        private final SplittableRandom random;
        private final SplittableRandom names;
        private final boolean keepCandidates;
        private final int shared;
        /** The conversation population the registers and removes keep. */
        private final int population;
        private final int[] slots = new int[3];
        private final ZipfSampler sharedPopularity;
        private final ZipfSampler agePopularity;
        /** Every block ever made, by id: shared ones first, then conversation blocks in order of creation. */
        private String[] keyOf = new String[1024];
        /** The tier's ordinal, or -1 once removed. */
        private byte[] tierOf = new byte[1024];
        private long[] lastUse = new long[1024];
        /** Each tier's residents (ids), and each id's place among them. */
        private final int[][] residents = new int[3][];
        private final int[] residentCount = new int[3];
        private int[] placeOf = new int[1024];
        /** The live conversation blocks are ids [oldest, next): removal is oldest first. */
        private int oldest;
        private int next;
        private long step;
        private final Ops out = new Ops();

        Generator(int segments, long seed, boolean keepCandidates) {
            this.random = new SplittableRandom(seed);
            this.names = new SplittableRandom(seed ^ 0x6b76626c6f636bL);
            this.keepCandidates = keepCandidates;
            this.shared = segments / 100;
            this.population = segments - shared;
            slots[Tier.GPU.ordinal()] = segments * GPU_PERCENT / 100;
            slots[Tier.CPU.ordinal()] = segments * CPU_PERCENT / 100;
            slots[Tier.DISK.ordinal()] = Integer.MAX_VALUE;
            for (int t = 0; t < 3; t++) {
                residents[t] = new int[1024];
            }
            sharedPopularity = new ZipfSampler(shared, 1.0);
            agePopularity = new ZipfSampler(population + population / 100 + 1, 1.0);
        }

        StoreOpTrace run(int ops) {
            for (int id = 0; id < shared; id++) {
                newBlock();
                register(id, Tier.GPU);
            }
            oldest = shared;
            next = shared;
            int gpuLeft = slots[Tier.GPU.ordinal()] - shared;
            int cpuSlots = slots[Tier.CPU.ordinal()];
            for (int i = 0; i < population; i++) {
                int age = population - 1 - i;
                int id = newBlock();
                lastUse[id] = -age; // older blocks were used longer ago
                register(id, age < gpuLeft ? Tier.GPU : age < gpuLeft + cpuSlots ? Tier.CPU : Tier.DISK);
            }
            int setup = out.size;
            int dropped = 0; // candidate queries drawn but not kept: they count towards ops all the same
            while (out.size - setup + dropped < ops) {
                step++;
                double u = random.nextDouble();
                if (u < CANDIDATE_STEPS) {
                    Tier tier = random.nextInt(4) == 0 ? Tier.CPU : Tier.GPU;
                    if (keepCandidates) {
                        out.add(CANDIDATES, null, tier, 0, 0, CANDIDATE_SEGMENTS * SEGMENT_BYTES);
                    } else {
                        dropped++;
                    }
                } else if (u < CANDIDATE_STEPS + 0.04) {
                    registerOrRemove(true);
                } else if (u < CANDIDATE_STEPS + 0.08) {
                    registerOrRemove(false);
                } else if (u < CANDIDATE_STEPS + 0.33) {
                    get();
                } else {
                    use();
                }
            }
            // A last step that made room may run past ops: its last operations go (the same ones either way).
            out.size = setup + ops - dropped;
            return out.build(slots[Tier.GPU.ordinal()] * SEGMENT_BYTES, slots[Tier.CPU.ordinal()] * SEGMENT_BYTES,
                    setup);
        }

        /** A fresh block id with its key; not yet placed. */
        private int newBlock() {
            int id = next++;
            if (id == keyOf.length) {
                int grown = id * 2;
                keyOf = Arrays.copyOf(keyOf, grown);
                tierOf = Arrays.copyOf(tierOf, grown);
                lastUse = Arrays.copyOf(lastUse, grown);
                placeOf = Arrays.copyOf(placeOf, grown);
            }
            keyOf[id] = BlockKeys.of(names.nextLong(), names.nextLong());
            tierOf[id] = -1;
            return id;
        }

        private void register(int id, Tier tier) {
            int start = id % 32 * TOKENS_PER_BLOCK; // the block's depth in its chain
            out.add(REGISTER, keyOf[id], tier, start, start + TOKENS_PER_BLOCK, SEGMENT_BYTES);
            place(id, tier.ordinal());
        }

        private void registerOrRemove(boolean preferRegister) {
            int live = next - oldest;
            boolean register = preferRegister ? live <= population + population / 100
                    : live < population - population / 100;
            if (register) {
                makeRoomOnGpu(-1);
                int id = newBlock();
                lastUse[id] = step;
                register(id, Tier.GPU);
            } else {
                int id = oldest++;
                out.add(REMOVE, keyOf[id], null, 0, 0, 0);
                unplace(id);
            }
        }

        private void get() {
            if (random.nextDouble() < 0.03) {
                out.add(GET, BlockKeys.of(names.nextLong(), names.nextLong()), null, 0, 0, 0);
            } else {
                out.add(GET, keyOf[popularBlock()], null, 0, 0, 0);
            }
        }

        private void use() {
            int expired = oldest - shared;
            if (expired > 0 && random.nextDouble() < 0.005) {
                int id = oldest - 1 - random.nextInt(Math.min(1_000, expired));
                out.add(TOUCH, keyOf[id], null, 0, 0, 0);
                return;
            }
            int id = popularBlock();
            lastUse[id] = step;
            if (tierOf[id] == Tier.GPU.ordinal()) {
                out.add(TOUCH, keyOf[id], null, 0, 0, 0);
            } else {
                makeRoomOnGpu(id);
                out.add(PROMOTE, keyOf[id], Tier.GPU, 0, 0, 0);
                move(id, Tier.GPU.ordinal());
            }
        }

        /** A live block by popularity: a shared one (Zipf) with probability 0.2, else a conversation block by age. */
        private int popularBlock() {
            if (random.nextDouble() < 0.2) {
                return sharedPopularity.sample(random);
            }
            int live = next - oldest;
            while (true) {
                int age = agePopularity.sample(random);
                if (age < live) {
                    return next - 1 - age;
                }
            }
        }

        /** Demotes a GPU victim to the CPU if the GPU is full, first a CPU victim to disk if that is full too. */
        private void makeRoomOnGpu(int arriving) {
            int gpu = Tier.GPU.ordinal();
            int cpu = Tier.CPU.ordinal();
            if (residentCount[gpu] < slots[gpu]) {
                return;
            }
            int victim = sampledLeastRecent(gpu, -1);
            if (residentCount[cpu] >= slots[cpu]) {
                int cpuVictim = sampledLeastRecent(cpu, arriving);
                out.add(DEMOTE, keyOf[cpuVictim], Tier.DISK, 0, 0, 0);
                move(cpuVictim, Tier.DISK.ordinal());
            }
            out.add(DEMOTE, keyOf[victim], Tier.CPU, 0, 0, 0);
            move(victim, cpu);
        }

        /** The least recently used of a few random residents of {@code tier}, never {@code excluded}. */
        private int sampledLeastRecent(int tier, int excluded) {
            int best = -1;
            for (int i = 0; i < VICTIM_SAMPLES || best < 0; i++) {
                int id = residents[tier][random.nextInt(residentCount[tier])];
                if (id != excluded && (best < 0 || lastUse[id] < lastUse[best])) {
                    best = id;
                }
            }
            return best;
        }

        private void move(int id, int tier) {
            unplace(id);
            place(id, tier);
        }

        private void place(int id, int tier) {
            if (residentCount[tier] == residents[tier].length) {
                residents[tier] = Arrays.copyOf(residents[tier], residents[tier].length * 2);
            }
            placeOf[id] = residentCount[tier];
            residents[tier][residentCount[tier]++] = id;
            tierOf[id] = (byte) tier;
        }

        private void unplace(int id) {
            int tier = tierOf[id];
            int last = residents[tier][--residentCount[tier]];
            residents[tier][placeOf[id]] = last;
            placeOf[last] = placeOf[id];
            tierOf[id] = -1;
        }
    }

    /** The operations of a trace being built or read, in growing arrays. */
    private static final class Ops {
        int size;
        byte[] kinds = new byte[1024];
        String[] keys = new String[1024];
        byte[] tiers = new byte[1024];
        int[] starts = new int[1024];
        int[] ends = new int[1024];
        long[] bytes = new long[1024];

        void add(byte kind, String key, Tier tier, int start, int end, long byteCount) {
            addOrdinal(kind, key, tier == null ? -1 : tier.ordinal(), start, end, byteCount);
        }

        void addOrdinal(byte kind, String key, int tier, int start, int end, long byteCount) {
            if (size == kinds.length) {
                int grown = size * 2;
                kinds = Arrays.copyOf(kinds, grown);
                keys = Arrays.copyOf(keys, grown);
                tiers = Arrays.copyOf(tiers, grown);
                starts = Arrays.copyOf(starts, grown);
                ends = Arrays.copyOf(ends, grown);
                bytes = Arrays.copyOf(bytes, grown);
            }
            kinds[size] = kind;
            keys[size] = key;
            tiers[size] = (byte) tier;
            starts[size] = start;
            ends[size] = end;
            bytes[size] = byteCount;
            size++;
        }

        StoreOpTrace build(long gpuBudget, long cpuBudget, int setup) {
            return new StoreOpTrace(gpuBudget, cpuBudget, setup, Arrays.copyOf(kinds, size),
                    Arrays.copyOf(keys, size), Arrays.copyOf(tiers, size), Arrays.copyOf(starts, size),
                    Arrays.copyOf(ends, size), Arrays.copyOf(bytes, size));
        }
    }

    /** Writes this trace to {@code file} in the format of the class comment. */
    void write(Path file) throws IOException {
        try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.US_ASCII)) {
            w.write(MAGIC + "\nbudgets " + gpuBudget + " " + cpuBudget + "\nsetup " + setup + "\nops " + size()
                    + "\n");
            StringBuilder line = new StringBuilder(80);
            for (int i = 0; i < kinds.length; i++) {
                line.setLength(0);
                line.append(KIND_LETTERS.charAt(kinds[i]));
                if (kinds[i] == CANDIDATES) {
                    line.append(' ').append(TIER_LETTERS.charAt(tiers[i])).append(' ').append(bytes[i]);
                } else {
                    line.append(' ').append(keys[i]);
                    if (kinds[i] == REGISTER) {
                        line.append(' ').append(starts[i]).append(' ').append(ends[i]).append(' ').append(bytes[i]);
                    }
                    if (tiers[i] >= 0) {
                        line.append(' ').append(TIER_LETTERS.charAt(tiers[i]));
                    }
                }
                w.append(line).append('\n');
            }
        }
    }

    /**
     * Reads a trace written by {@link #write}. Every key is a String of its own (keys are not shared between
     * operations, as a serving engine builds a key per request), so a replay pays for hashing each key once, as
     * the Rust seed does.
     *
     * @throws IOException              if the file cannot be read
     * @throws IllegalArgumentException naming the line if the file is not in the format
     */
    static StoreOpTrace read(Path file) throws IOException {
        try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.US_ASCII)) {
            int lineNumber = 1;
            String magic = r.readLine();
            if (!MAGIC.equals(magic)) {
                throw new IllegalArgumentException(file + ": line 1 must be \"" + MAGIC + "\", was " + magic);
            }
            String[] budgets = header(r.readLine(), "budgets", 3, file, ++lineNumber);
            int setup = Integer.parseInt(header(r.readLine(), "setup", 2, file, ++lineNumber)[1]);
            int count = Integer.parseInt(header(r.readLine(), "ops", 2, file, ++lineNumber)[1]);
            Ops ops = new Ops();
            for (int i = 0; i < count; i++) {
                String line = r.readLine();
                lineNumber++;
                if (line == null) {
                    throw new IllegalArgumentException(file + ": ends at line " + lineNumber + ", " + count
                            + " operations announced");
                }
                try {
                    parse(line, ops);
                } catch (RuntimeException e) {
                    throw new IllegalArgumentException(file + ": line " + lineNumber + " is no operation: \"" + line
                            + "\" (" + e.getMessage() + ")", e);
                }
            }
            return ops.build(Long.parseLong(budgets[1]), Long.parseLong(budgets[2]), setup);
        }
    }

    private static String[] header(String line, String name, int fields, Path file, int lineNumber) {
        String[] parts = line == null ? new String[0] : line.split(" ");
        if (parts.length != fields || !parts[0].equals(name)) {
            throw new IllegalArgumentException(file + ": line " + lineNumber + " must be \"" + name + "\" and "
                    + (fields - 1) + " numbers, was " + line);
        }
        return parts;
    }

    private static void parse(String line, Ops ops) {
        String[] f = line.split(" ");
        byte kind = (byte) KIND_LETTERS.indexOf(f[0]);
        int expected = switch (kind) {
            case REGISTER -> 6;
            case TOUCH, GET, REMOVE -> 2;
            case DEMOTE, PROMOTE, CANDIDATES -> 3;
            default -> throw new IllegalArgumentException("unknown operation " + f[0]);
        };
        if (f.length != expected || f[0].length() != 1) {
            throw new IllegalArgumentException(expected + " fields expected, " + f.length + " found");
        }
        switch (kind) {
            case REGISTER -> ops.addOrdinal(kind, f[1], tier(f[5]), Integer.parseInt(f[2]), Integer.parseInt(f[3]),
                    Long.parseLong(f[4]));
            case DEMOTE, PROMOTE -> ops.addOrdinal(kind, f[1], tier(f[2]), 0, 0, 0);
            case CANDIDATES -> ops.addOrdinal(kind, null, tier(f[1]), 0, 0, Long.parseLong(f[2]));
            default -> ops.addOrdinal(kind, f[1], -1, 0, 0, 0);
        }
    }

    private static int tier(String letter) {
        int tier = letter.length() == 1 ? TIER_LETTERS.indexOf(letter) : -1;
        if (tier < 0) {
            throw new IllegalArgumentException("tier must be G, C or D, was " + letter);
        }
        return tier;
    }

    /** Generates a trace into a file: see the class comment for the arguments. */
    public static void main(String[] args) throws IOException {
        if (args.length < 1 || args.length > 5) {
            System.err.println("usage: StoreOpTrace OUT [segments 100000] [ops 1100000] [seed 42] [candidates on|off]");
            System.exit(2);
        }
        Path out = Path.of(args[0]);
        int segments = args.length > 1 ? Integer.parseInt(args[1]) : 100_000;
        int ops = args.length > 2 ? Integer.parseInt(args[2]) : 1_100_000;
        long seed = args.length > 3 ? Long.parseLong(args[3]) : 42;
        String candidates = args.length > 4 ? args[4] : "on";
        if (!candidates.equals("on") && !candidates.equals("off")) {
            throw new IllegalArgumentException("candidates must be on or off, was " + candidates);
        }
        StoreOpTrace trace = generate(segments, ops, seed, candidates.equals("on"));
        trace.write(out);
        long[] counts = trace.countsByKind();
        long timed = trace.size() - trace.setup;
        StringBuilder mix = new StringBuilder();
        for (int k = 0; k < counts.length; k++) {
            mix.append(String.format(Locale.ROOT, " %s %d (%.2f%%)", KIND_NAMES[k], counts[k],
                    100.0 * counts[k] / timed));
        }
        System.out.println(out + ": " + segments + " segments (setup " + trace.setup + "), " + timed
                + " timed operations:" + mix);
    }
}
