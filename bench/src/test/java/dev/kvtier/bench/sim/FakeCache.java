package dev.kvtier.bench.sim;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.kvtier.store.Tier;

/**
 * An in-memory {@link CacheUnderTest} for the simulator's own tests: three tiers with byte budgets and
 * least-recently-used demotion (GPU -> CPU -> disk), every segment a copy in native memory. It can be
 * told to damage a segment the first time it comes back from a tier, so the tests can see that the
 * simulator notices. Thread-safe (one lock).
 */
class FakeCache implements CacheUnderTest {
    /** How to damage a segment. */
    enum Damage { NONE, FLIP_BYTE, WRONG_POSITIONS, LOSE_SEGMENT }

    private static final int TIERS = Tier.values().length;

    private final Arena arena = Arena.ofShared();
    private final long[] budget;
    private final long[] used = new long[TIERS];
    private final long[] moved = new long[TIERS * TIERS];
    private final Map<String, Entry> entries = new LinkedHashMap<>(16, 0.75f, true);
    private long transfers;
    private final Tier damageWhenLeaving;
    private final Damage damage;
    private boolean damaged;
    private boolean closed;

    private static final class Entry {
        final MemorySegment bytes;
        long start;
        final long end;
        Tier tier;

        Entry(MemorySegment bytes, long start, long end, Tier tier) {
            this.bytes = bytes;
            this.start = start;
            this.end = end;
            this.tier = tier;
        }
    }

    FakeCache(Settings settings) {
        this(settings, Tier.GPU, Damage.NONE);
    }

    /** A fake that damages the first segment promoted to the GPU from {@code damageWhenLeaving}. */
    FakeCache(Settings settings, Tier damageWhenLeaving, Damage damage) {
        this.budget = new long[] {settings.gpuBudgetBytes(), settings.cpuBudgetBytes(), Long.MAX_VALUE};
        this.damageWhenLeaving = damageWhenLeaving;
        this.damage = damage;
    }

    @Override
    public synchronized void putOnGpu(String key, long startPosition, long endPosition, MemorySegment bytes) {
        check();
        if (entries.containsKey(key)) {
            throw new IllegalArgumentException("key exists: " + key);
        }
        makeRoom(Tier.GPU, bytes.byteSize());
        MemorySegment copy = arena.allocate(Math.max(1, bytes.byteSize())).asSlice(0, bytes.byteSize());
        copy.copyFrom(bytes);
        entries.put(key, new Entry(copy, startPosition, endPosition, Tier.GPU));
        used[Tier.GPU.ordinal()] += bytes.byteSize();
    }

    @Override
    public synchronized Resident ensureResidentOnGpu(String key) {
        check();
        Entry e = entries.get(key);
        if (e == null) {
            return null;
        }
        Tier from = e.tier;
        if (e.tier != Tier.GPU) {
            makeRoom(Tier.GPU, e.bytes.byteSize());
            move(e, Tier.GPU);
            if (from == damageWhenLeaving && !damaged && damage != Damage.NONE) {
                damaged = true;
                switch (damage) {
                    case FLIP_BYTE -> e.bytes.set(ValueLayout.JAVA_BYTE, 0, (byte) ~e.bytes.get(ValueLayout.JAVA_BYTE, 0));
                    case WRONG_POSITIONS -> e.start++;
                    case LOSE_SEGMENT -> {
                        entries.remove(key);
                        used[Tier.GPU.ordinal()] -= e.bytes.byteSize();
                    }
                    case NONE -> { }
                }
            }
        }
        return new Resident(e.start, e.end, e.bytes.byteSize(), e.tier, from);
    }

    /** Demotes least recently used segments off {@code tier} until {@code needed} bytes fit. */
    private void makeRoom(Tier tier, long needed) {
        if (tier == Tier.DISK) {
            return;
        }
        int t = tier.ordinal();
        if (needed > budget[t]) {
            throw new IllegalStateException(needed + " bytes do not fit the " + tier + " budget " + budget[t]);
        }
        List<Entry> victims = new ArrayList<>();
        long free = budget[t] - used[t];
        for (Entry e : entries.values()) {
            if (free >= needed) {
                break;
            }
            if (e.tier == tier) {
                victims.add(e);
                free += e.bytes.byteSize();
            }
        }
        Tier lower = Tier.values()[t + 1];
        for (Entry victim : victims) {
            makeRoom(lower, victim.bytes.byteSize());
            move(victim, lower);
        }
    }

    private void move(Entry e, Tier to) {
        used[e.tier.ordinal()] -= e.bytes.byteSize();
        used[to.ordinal()] += e.bytes.byteSize();
        moved[e.tier.ordinal() * TIERS + to.ordinal()] += e.bytes.byteSize();
        transfers++;
        e.tier = to;
    }

    @Override
    public synchronized Optional<Tier> tierOf(String key) {
        check();
        Entry e = entries.get(key);
        return e == null ? Optional.empty() : Optional.of(e.tier);
    }

    @Override
    public synchronized void read(String key, MemorySegment destination) {
        check();
        Entry e = entries.get(key);
        if (e == null) {
            throw new IllegalArgumentException("unknown key " + key);
        }
        if (destination.byteSize() != e.bytes.byteSize()) {
            throw new IllegalArgumentException("destination of " + destination.byteSize() + " bytes for " + e.bytes.byteSize());
        }
        destination.copyFrom(e.bytes);
    }

    @Override
    public synchronized boolean remove(String key) {
        check();
        Entry e = entries.remove(key);
        if (e == null) {
            return false;
        }
        used[e.tier.ordinal()] -= e.bytes.byteSize();
        return true;
    }

    @Override
    public synchronized Counters counters() {
        return new Counters(used, transfers, 0, moved);
    }

    @Override
    public String backendDescription() {
        return "fake (in-memory, for the simulator's tests)";
    }

    private void check() {
        if (closed) {
            throw new IllegalStateException("closed");
        }
    }

    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            arena.close();
        }
    }
}
