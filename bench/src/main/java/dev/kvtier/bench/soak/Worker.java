package dev.kvtier.bench.soak;

import dev.kvtier.KvTierCache;
import dev.kvtier.ResidentSegment;
import dev.kvtier.SegmentNotFoundException;
import dev.kvtier.SegmentPin;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;

import java.lang.foreign.MemorySegment;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * One operating thread of an epoch: random operations on one cache, every byte read checked.
 *
 * <p>Each worker owns {@code keys} keys: only it puts and removes them (a put is remove-then-put of the next version),
 * so its model of them is exact: absent, or the bytes of the version it last put (or unknown, after a failure whose
 * effect could not be learned). Every other operation (read, ensureResident, promote, demote, pin) goes to any
 * thread's keys, so operations on one key do race. A read of an own key must return exactly the modelled bytes (or
 * {@link SegmentNotFoundException} for an absent one); a read of another thread's key, or of pinned pages, must return
 * whole bytes of that key in a version that was live at some moment of the read: newer than the last version its owner
 * had finished removing when the read began, not newer than the last one it had started to put when the read ended
 * (the {@link Board}). The positions a segment was put with encode its version, so a pinned segment's metadata is
 * checked against its bytes too.
 *
 * <p>Failures are counted by exception type; faults are there to make calls fail. After a failed call on an own key
 * the model is resynchronized from {@link KvTierCache#get}: a failed move may, as its last resort, remove the segment
 * (counted as lost, not as a fault of the soak). The interrupt flag is cleared after every operation, so an interrupt
 * meant for one call does not leak into the next.
 */
final class Worker implements Runnable {
    /** The page size of every soak cache: small, so that a few KiB make many pages, chunks and extents. */
    static final int PAGE = 4096;
    /** The largest segment the soak puts. */
    static final int MAX_SIZE = Content.HEADER + 3 * PAGE + PAGE / 2;

    private static final Tier[] TIERS = Tier.values();

    /** What every worker publishes about its keys, for the others' reads: versions started and removed. */
    static final class Board {
        private final int keys;
        private final AtomicIntegerArray started;
        private final AtomicIntegerArray removedUpTo;

        Board(int threads, int keys) {
            this.keys = keys;
            this.started = new AtomicIntegerArray(threads * keys);
            this.removedUpTo = new AtomicIntegerArray(threads * keys);
        }
    }

    private enum State { ABSENT, PRESENT, UNKNOWN }

    private final int id;
    private final int threads;
    private final KvTierCache cache;
    private final EpochCounters counters;
    private final Board board;
    private final Content content;
    private final HangWatch watch;
    private final SplittableRandom random;
    private final boolean pagesReadable;
    private final AtomicBoolean stop;
    private final String keyPrefix;
    private final State[] state;
    private final int[] version;
    private final int[] size;
    private HangWatch.Slot slot;

    /**
     * @param pagesReadable whether pinned pages can be read by the host (host backend, or device memory of the fake)
     */
    Worker(int id, int threads, KvTierCache cache, EpochCounters counters, Board board, Content content,
           HangWatch watch, long seed, boolean pagesReadable, AtomicBoolean stop) {
        this.id = id;
        this.threads = threads;
        this.cache = cache;
        this.counters = counters;
        this.board = board;
        this.content = content;
        this.watch = watch;
        this.random = new SplittableRandom(seed);
        this.pagesReadable = pagesReadable;
        this.stop = stop;
        this.keyPrefix = "e" + counters.epoch + "-";
        this.state = new State[board.keys];
        this.version = new int[board.keys];
        this.size = new int[board.keys];
        java.util.Arrays.fill(state, State.ABSENT);
    }

    @Override
    public void run() {
        slot = watch.slot();
        try {
            while (!stop.get()) {
                step();
                Thread.interrupted(); // an interrupt aimed at the last call must not fail the next one
            }
        } finally {
            watch.release(slot);
        }
    }

    private static String key(String prefix, int thread, int k) {
        return prefix + "t" + thread + "-k" + k;
    }

    private static int keyNumber(int thread, int k) {
        return thread * 1000 + k;
    }

    private void step() {
        int k = random.nextInt(board.keys);
        int other = threads == 1 ? id : random.nextInt(threads);
        int r = random.nextInt(100);
        if (r < 18) {
            put(k);
        } else if (r < 33) {
            readOwn(k);
        } else if (r < 43) {
            readAny(Op.READ_OTHER, other, k);
        } else if (r < 48) {
            getOwn(k);
        } else if (r < 63) {
            Tier tier = random.nextBoolean() ? Tier.GPU : Tier.CPU;
            call(Op.ENSURE_RESIDENT, key(keyPrefix, other, k), () -> {
                ResidentSegment resident = cache.ensureResident(key(keyPrefix, other, k), tier);
                if (resident.tier().ordinal() > tier.ordinal()) {
                    counters.wrongMetadata("ensureResident(" + tier + ") of \"" + resident.key() + "\" returned it on " + resident.tier());
                }
            });
        } else if (r < 71) {
            Tier tier = random.nextBoolean() ? Tier.GPU : Tier.CPU;
            call(Op.PROMOTE, key(keyPrefix, other, k), () -> cache.promote(key(keyPrefix, other, k), tier));
        } else if (r < 83) {
            Tier tier = random.nextBoolean() ? Tier.CPU : Tier.DISK;
            call(Op.DEMOTE, key(keyPrefix, other, k), () -> cache.demote(key(keyPrefix, other, k), tier));
        } else if (r < 94) {
            pinAndReadPages(other, k);
        } else {
            remove(k);
        }
    }

    // ------------------------------------------------------------------ own keys: the exact model

    private void put(int k) {
        String key = key(keyPrefix, id, k);
        int g = id * board.keys + k;
        if (!call(Op.REMOVE, key, () -> cache.remove(key))) {
            resync(k, key);
            return;
        }
        state[k] = State.ABSENT;
        board.removedUpTo.set(g, board.started.get(g)); // every version started so far is gone
        int v = board.started.get(g) + 1;
        board.started.set(g, v);
        int bytes = Content.HEADER + PAGE / 2 + random.nextInt(3 * PAGE);
        Tier tier = TIERS[random.nextInt(TIERS.length)];
        byte[] data = content.bytes(keyNumber(id, k), v, bytes);
        if (call(Op.PUT, key, () -> cache.put(key, positions(v, bytes), MemorySegment.ofArray(data), tier))) {
            state[k] = State.PRESENT;
            version[k] = v;
            size[k] = bytes;
        } else {
            // The remove before it took every older version, so if anything is cached now it is version v.
            version[k] = v;
            size[k] = bytes;
            state[k] = State.UNKNOWN;
            resync(k, key);
        }
    }

    private void remove(int k) {
        String key = key(keyPrefix, id, k);
        int g = id * board.keys + k;
        if (call(Op.REMOVE, key, () -> cache.remove(key))) {
            state[k] = State.ABSENT;
            board.removedUpTo.set(g, board.started.get(g));
        } else {
            resync(k, key);
        }
    }

    private void readOwn(int k) {
        String key = key(keyPrefix, id, k);
        switch (state[k]) {
            case ABSENT -> {
                byte[] back = new byte[MAX_SIZE];
                counters.op(Op.READ_OWN);
                slot.begin(Op.READ_OWN.label + " \"" + key + "\" (absent)");
                try {
                    cache.read(key, MemorySegment.ofArray(back));
                    counters.wrong("read of absent \"" + key + "\" (last removed v" + board.removedUpTo.get(id * board.keys + k)
                            + ") returned bytes: " + describe(back, MAX_SIZE, keyNumber(id, k)));
                } catch (SegmentNotFoundException expected) {
                    // absent, as modelled; not a failure
                } catch (RuntimeException | Error e) {
                    counters.failed(Op.READ_OWN, key, e);
                } finally {
                    slot.end();
                }
            }
            case PRESENT -> {
                byte[] back = new byte[size[k]];
                int v = version[k];
                boolean read;
                counters.op(Op.READ_OWN);
                slot.begin(Op.READ_OWN.label + " \"" + key + "\"");
                try {
                    cache.read(key, MemorySegment.ofArray(back));
                    read = true;
                } catch (SegmentNotFoundException e) {
                    counters.lostSegments.increment(); // a failed move's last resort removed it
                    state[k] = State.ABSENT;
                    read = false;
                } catch (RuntimeException | Error e) {
                    counters.failed(Op.READ_OWN, key, e);
                    read = false;
                } finally {
                    slot.end();
                }
                if (read) {
                    verify(key, back, size[k], keyNumber(id, k), v, v);
                } else if (state[k] != State.ABSENT) {
                    resync(k, key);
                }
            }
            case UNKNOWN -> readAny(Op.READ_OWN, id, k);
        }
    }

    private void getOwn(int k) {
        String key = key(keyPrefix, id, k);
        Optional<SegmentMeta> meta = get(Op.GET, key);
        if (meta == null) {
            return;
        }
        if (state[k] == State.PRESENT && meta.isEmpty()) {
            counters.lostSegments.increment();
            state[k] = State.ABSENT;
        } else if (state[k] == State.ABSENT && meta.isPresent()) {
            counters.wrongMetadata("get of absent \"" + key + "\" found " + meta.get());
        } else if (state[k] == State.PRESENT && meta.get().sizeBytes() != size[k]) {
            counters.wrongMetadata("get of \"" + key + "\" v" + version[k] + " says " + meta.get().sizeBytes()
                    + " bytes, put " + size[k]);
        } else if (state[k] == State.UNKNOWN) {
            applyMeta(k, meta);
        }
    }

    /** After a failure on an own key: learn from the metadata whether it is still cached. */
    private void resync(int k, String key) {
        Optional<SegmentMeta> meta = get(Op.GET, key);
        if (meta == null) {
            state[k] = State.UNKNOWN;
            return;
        }
        if (state[k] == State.PRESENT && meta.isEmpty()) {
            counters.lostSegments.increment();
        }
        applyMeta(k, meta);
    }

    private void applyMeta(int k, Optional<SegmentMeta> meta) {
        if (meta.isEmpty()) {
            state[k] = State.ABSENT;
            return;
        }
        // Only this thread puts the key and each put removes first: what is cached is the last version started.
        int g = id * board.keys + k;
        version[k] = board.started.get(g);
        size[k] = (int) meta.get().sizeBytes();
        state[k] = State.PRESENT;
    }

    // ------------------------------------------------------------------ any key: versions live during the call

    private void readAny(Op op, int thread, int k) {
        String key = key(keyPrefix, thread, k);
        int g = thread * board.keys + k;
        int low = board.removedUpTo.get(g) + 1;
        byte[] back = new byte[MAX_SIZE];
        if (!call(op, key, () -> cache.read(key, MemorySegment.ofArray(back)))) {
            return;
        }
        int high = board.started.get(g);
        int claimed = Content.claimedSize(back);
        verify(key, back, claimed < 0 || claimed > MAX_SIZE ? MAX_SIZE : claimed, keyNumber(thread, k), low, high);
    }

    private void pinAndReadPages(int thread, int k) {
        String key = key(keyPrefix, thread, k);
        int g = thread * board.keys + k;
        Tier tier = random.nextBoolean() ? Tier.GPU : Tier.CPU;
        int low = board.removedUpTo.get(g) + 1;
        counters.op(Op.PIN_PAGES);
        slot.begin(Op.PIN_PAGES.label + " \"" + key + "\" on " + tier);
        byte[] back = null;
        ResidentSegment resident = null;
        try (SegmentPin pin = cache.pin(key, tier)) {
            resident = pin.segment();
            if (pagesReadable) {
                back = new byte[(int) resident.sizeBytes()];
                long offset = 0;
                for (MemorySegment run : resident.pages()) {
                    MemorySegment.copy(run, 0, MemorySegment.ofArray(back), offset, run.byteSize());
                    offset += run.byteSize();
                }
                if (offset != resident.sizeBytes()) {
                    counters.wrong("pinned \"" + key + "\" has runs of " + offset + " bytes for a segment of " + resident.sizeBytes());
                }
            }
            if (random.nextInt(4) == 0) {
                Thread.sleep(1); // hold the pin a little: other threads' room-making must work around it
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (SegmentNotFoundException e) {
            counters.absent(Op.PIN_PAGES);
            return;
        } catch (RuntimeException | Error e) {
            counters.failed(Op.PIN_PAGES, key, e);
            return;
        } finally {
            slot.end();
        }
        if (resident == null) {
            return;
        }
        int high = board.started.get(g);
        if (resident.tier().ordinal() > tier.ordinal()) {
            counters.wrongMetadata("pin(" + tier + ") of \"" + key + "\" pinned it on " + resident.tier());
        }
        if (back != null && verify(key + " (pinned pages on " + resident.tier() + ")", back, back.length,
                keyNumber(thread, k), low, high)) {
            int v = java.nio.ByteBuffer.wrap(back).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt(8);
            if (!resident.positions().equals(positions(v, back.length))) {
                counters.wrongMetadata("pinned \"" + key + "\" holds the bytes of v" + v + " but positions " + resident.positions()
                        + " (v" + v + " was put with " + positions(v, back.length) + ")");
            }
        }
    }

    // ------------------------------------------------------------------ helpers

    /** The positions version {@code v} is put with: they say which version the metadata belongs to. */
    private static PositionRange positions(int v, int bytes) {
        return PositionRange.of(v, (long) v + bytes);
    }

    /** Checks bytes read back; counts and describes a mismatch. Returns whether they were right. */
    private boolean verify(String key, byte[] back, int length, int keyNumber, int low, int high) {
        String wrong = content.check(back, length, keyNumber, low, high);
        if (wrong == null) {
            counters.verifiedReads.increment();
            counters.verifiedBytes.add(length);
            return true;
        }
        String where;
        try {
            where = cache.get(key.contains(" ") ? key.substring(0, key.indexOf(' ')) : key)
                    .map(meta -> "now on " + meta.tier()).orElse("now absent");
        } catch (RuntimeException e) {
            where = "tier unknown: " + e;
        }
        counters.wrong("\"" + key + "\" expected key " + keyNumber + " v" + low + (low == high ? "" : "..v" + high)
                + ", got " + wrong + " (" + where + ")");
        return false;
    }

    private static String describe(byte[] back, int length, int keyNumber) {
        int claimed = Content.claimedSize(back);
        return claimed < 0 ? "no header" : "header of " + claimed + " bytes, key bytes " + keyNumber;
    }

    private Optional<SegmentMeta> get(Op op, String key) {
        counters.op(op);
        slot.begin(op.label + " \"" + key + "\"");
        try {
            return cache.get(key);
        } catch (RuntimeException | Error e) {
            counters.failed(op, key, e);
            return null;
        } finally {
            slot.end();
        }
    }

    /** Runs one operation under the hang watch; counts it, and its failure. Returns whether it succeeded. */
    private boolean call(Op op, String key, Runnable operation) {
        counters.op(op);
        slot.begin(op.label + " \"" + key + "\"");
        try {
            operation.run();
            return true;
        } catch (SegmentNotFoundException e) {
            counters.absent(op);
            return false;
        } catch (RuntimeException | Error e) {
            counters.failed(op, key, e);
            return false;
        } finally {
            slot.end();
        }
    }
}
