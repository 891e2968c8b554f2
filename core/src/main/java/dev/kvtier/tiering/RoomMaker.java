package dev.kvtier.tiering;

import dev.kvtier.KvTierException;
import dev.kvtier.TierFullException;
import dev.kvtier.TransferFailedException;
import dev.kvtier.concurrent.Backoff;
import dev.kvtier.exec.PageAllocation;
import dev.kvtier.observe.RoomMakingEvent;
import dev.kvtier.store.SegmentHandle;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;
import dev.kvtier.store.TierTransfer;
import dev.kvtier.store.TieredStore;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionException;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Eviction: makes room on a full GPU or CPU tier by demoting the policy's candidates down the
 * {@link DemotionCascade}, the victims of one round booked first and their bytes moved together
 * ({@link Mover#copyAll}: one {@code cudaMemcpyBatchAsync} and one wait on the CUDA backend instead of
 * one per victim, which is what makes room for a large segment among many small ones cheap). A
 * segment being moved or made resident (its lock is held) or pinned is never chosen.
 *
 * <p><b>Room is made in batches.</b> A round that must make room at all frees, if it can, a configured share of the
 * tier's budget ({@link dev.kvtier.KvTierConfig#roomBatchFraction()}) rather than only the arrival's bytes, so the
 * arrivals after it find room with no round: one candidates query, one booking pass and one batched copy per tier
 * pair serve many arrivals, and the room its victims need below (CPU to DISK, a nested round) is batched the same
 * way. What a round costs beyond its victims is mostly the wait for its copies (one event per batch on the CUDA
 * backend; on the host backend, which copies on the calling thread, little: bench/RESULTS.md, Small-block path).
 * The batch is best effort: a round cut short by pins or refusals succeeds once the arrival's own bytes are free.
 *
 * <p><b>Prefix blocks leave from the tail.</b> A prefix block (see {@code Segment#parent}) is never chosen
 * to leave a tier while one of its children has its bytes on that tier or a faster one (the candidate is
 * skipped and the store asked for more), nor sent down the cascade past a tier where a child of it is (a
 * GPU block with a child on CPU may go to CPU, not straight to DISK). So, with children never placed
 * hotter than their parents (the prefix layer's rule), a chain is demoted from its tail first, a child is
 * never hotter than its parent, and since a block is evicted from DISK only once it has no cached child left
 * (below), no parent leaves the cache while a child stays. The policy ranks, this class filters; a candidate refused for a child on its own tier
 * is {@linkplain TieredStore#hold held} in the policy until its last child there leaves ({@link #releaseParent}), so
 * later rounds pass it over instead of naming and refusing it again (measured on the chat trace: 10.6 M refusals
 * per run before, 45 K after).
 *
 * <p><b>A bounded DISK tier evicts.</b> With a DISK budget ({@link dev.kvtier.KvTierConfig#diskBudgetBytes()}),
 * room on a full DISK tier is made the same way, in the policy's order, except that there is no tier below: a
 * victim leaves the cache (its pages freed, the listeners told, counted in {@link TierCounters#evicted}). A block
 * with a cached child, on any tier, is refused and held as above, so chains leave DISK tail first too.
 *
 * <p>Also the one home of rollback: a failed move's booking is put back on the tier it came from,
 * which may need room there again ({@link #undo}). Retries go in bounded rounds with
 * {@link Backoff#ROOM_RETRY} between rounds that freed nothing. Each round that demotes is a JFR
 * {@link RoomMakingEvent}. Thread-safe.
 */
final class RoomMaker {
    private static final System.Logger LOG = System.getLogger(RoomMaker.class.getName());
    /** Rounds of making room before a call gives up; between rounds it waits for other moves to finish. */
    static final int ROUNDS = 40;
    /** Rounds a call waits for pages held by moves in flight when nothing can be demoted (~30 ms of backoff). */
    static final int SHORTAGE_PATIENCE = 5;

    private final TieredStore store;
    private final SegmentTable table;
    private final Mover mover;
    private final DemotionCascade cascade;
    private final ChangeListeners listeners;
    private final TierCounters counters;
    /**
     * Per tier (by ordinal), the bytes a round of making room aims to leave free once it must make room at all: the
     * tier's budget times the configured batch fraction (0 for an unbounded DISK tier, which is never full).
     */
    private final long[] batchBytes = new long[Tier.values().length];

    /**
     * @param batchFraction the share of a bounded tier's budget one round of making room frees at least
     *                      ({@link dev.kvtier.KvTierConfig#roomBatchFraction()}, validated there); 0: only what is needed
     */
    RoomMaker(TieredStore store, SegmentTable table, Mover mover, DemotionCascade cascade, ChangeListeners listeners,
              TierCounters counters, double batchFraction) {
        this.store = store;
        this.table = table;
        this.mover = mover;
        this.cascade = cascade;
        this.listeners = listeners;
        this.counters = counters;
        batchBytes[Tier.GPU.ordinal()] = (long) (store.gpuBudget() * batchFraction);
        batchBytes[Tier.CPU.ordinal()] = (long) (store.cpuBudget() * batchFraction);
        if (store.diskBudget() != Long.MAX_VALUE) {
            batchBytes[Tier.DISK.ordinal()] = (long) (store.diskBudget() * batchFraction);
        }
    }

    /**
     * Runs {@code attempt} up to {@link #ROUNDS} times until it answers non-null; after each miss asks
     * {@code madeProgress} (which may make room) and backs off when it answers false.
     *
     * @return what {@code attempt} answered, or null when every round missed
     */
    static <T> T retry(Supplier<T> attempt, BooleanSupplier madeProgress) {
        return retry(ROUNDS, attempt, madeProgress, false);
    }

    /** {@link #retry(Supplier, BooleanSupplier)} in at most {@code rounds} rounds. */
    static <T> T retry(int rounds, Supplier<T> attempt, BooleanSupplier madeProgress) {
        return retry(rounds, attempt, madeProgress, false);
    }

    /**
     * {@link #retry(int, Supplier, BooleanSupplier)}; {@code firstMissed}: the caller made the first attempt,
     * which missed (its fast path), so the first round starts by making progress.
     */
    private static <T> T retry(int rounds, Supplier<T> attempt, BooleanSupplier madeProgress, boolean firstMissed) {
        for (int round = 0; round < rounds; round++) {
            if (round > 0 || !firstMissed) {
                T done = attempt.get();
                if (done != null) {
                    return done;
                }
            }
            if (!madeProgress.getAsBoolean()) {
                Backoff.ROOM_RETRY.idle(round);
            }
        }
        return null;
    }

    /**
     * Registers a new segment on {@code tier}, making room there as needed, in at most {@code rounds} rounds
     * ({@link #ROUNDS} for most callers): a caller with somewhere else to put the segment (a new prefix block, which
     * may go to a slower tier) asks with few rounds, so a tier whose every candidate is held (its own chain, pins)
     * fails fast instead of backing off for long. {@code segment}, the engine's record of it (or null), is attached to
     * the handle: room making then reaches it from a candidate with no key lookup (see {@link #segmentOf}).
     */
    SegmentHandle register(SegmentMeta meta, Tier tier, int rounds, Segment segment) {
        return makingRoomUntil(meta.key(), tier, meta.sizeBytes(), rounds, () -> {
            SegmentHandle handle = store.registerHandle(meta, tier, segment);
            if (handle != null) {
                return handle;
            }
            if (tier == Tier.DISK && store.diskBudget() == Long.MAX_VALUE) {
                throw new IllegalStateException("the store refused segment \"" + meta.key() + "\" on an unbounded DISK tier");
            }
            return null;
        });
    }

    /**
     * Runs {@code attempt} until it answers non-null, making room on {@code tier} for segment {@code key}'s
     * {@code bytes} after each miss and backing off when none came free.
     *
     * @throws TierFullException if the segment can never fit, or after {@link #ROUNDS} misses
     */
    <T> T makingRoomUntil(String key, Tier tier, long bytes, Supplier<T> attempt) {
        return makingRoomUntil(key, tier, bytes, ROUNDS, attempt);
    }

    /** {@link #makingRoomUntil(String, Tier, long, Supplier)} in at most {@code rounds} rounds. */
    <T> T makingRoomUntil(String key, Tier tier, long bytes, int rounds, Supplier<T> attempt) {
        return makingRoomUntil(key, null, tier, bytes, rounds, attempt);
    }

    /**
     * {@link #makingRoomUntil(String, Tier, long, int, Supplier)} for the segments {@code together} at once
     * ({@code bytes} is theirs together): a {@link TierFullException} names every one of them.
     */
    <T> T makingRoomForAll(List<Segment> together, Tier tier, long bytes, int rounds, Supplier<T> attempt) {
        return makingRoomUntil(together.getFirst().key, together, tier, bytes, rounds, attempt);
    }

    /** @param together the segments the room is for, when several (their keys are named only in a failure); else null */
    private <T> T makingRoomUntil(String key, List<Segment> together, Tier tier, long bytes, int rounds,
                                  Supplier<T> attempt) {
        T done = attempt.get();
        if (done != null) {
            return done; // room there already: none of the machinery below
        }
        Failed failed = new Failed();
        done = retry(rounds, attempt, () -> {
            if (bytes > budget(tier)) {
                throw full(key, together, tier, bytes, (together == null ? "the segment is" : "they are together")
                        + " larger than the " + tier + " budget of " + budget(tier) + " bytes", null);
            }
            if (makeRoom(tier, bytes, key, failed)) {
                return true;
            }
            if (failed.noneCanLeave) {
                // Waiting cannot help: budgets do not change, so no later round could move any of them.
                throw full(key, together, tier, bytes, "no segment there can leave it: each is larger than the budget"
                        + " of every tier it could be demoted to", null);
            }
            return false;
        }, true);
        if (done == null) {
            if (failed.last != null) {
                throw full(key, together, tier, bytes, "moving the candidates out failed, last: "
                        + failed.last.getMessage(), failed.last);
            }
            throw full(key, together, tier, bytes, "every segment there is being moved, made resident or pinned; retry", null);
        }
        return done;
    }

    private TierFullException full(String key, List<Segment> together, Tier tier, long bytes, String why, Throwable cause) {
        if (together == null) {
            return new TierFullException(key, tier, bytes, free(tier), why, cause);
        }
        List<String> keys = new ArrayList<>(together.size());
        for (Segment segment : together) {
            keys.add(segment.key);
        }
        return new TierFullException(keys, tier, bytes, free(tier), why, cause);
    }

    /**
     * The last failure of a candidate's demotion during one call's making of room: the real cause
     * when the call gives up (a full disk, say), said once in its exception rather than only in logs.
     */
    private static final class Failed {
        Throwable last;
        /**
         * Set by a round of making room on GPU or CPU that moved nothing because every candidate it met is larger than
         * the budget of every tier it could be demoted to: a fact no later round changes.
         */
        boolean noneCanLeave;

        /** Keeps {@code failure}; logs the first of a call at WARNING and the repeats of later rounds at DEBUG. */
        void note(Throwable failure, String what) {
            LOG.log(last == null ? System.Logger.Level.WARNING : System.Logger.Level.DEBUG,
                    what + ": " + failure.getMessage());
            last = failure;
        }
    }

    /**
     * Demotes the policy's candidates off {@code tier} until {@code needed} bytes are free, or the tier's batch
     * ({@link #batchBytes}) when that is more and the candidates allow. Skips
     * {@code excludeKey} and every segment whose lock is held (being moved or made resident). The
     * victims of one round are booked first and their bytes moved together; their locks are held
     * until their bytes are in place.
     *
     * @return whether {@code needed} bytes are free now
     */
    private boolean makeRoom(Tier tier, long needed, String excludeKey, Failed failed) {
        long free = free(tier);
        if (free >= needed) {
            return true;
        }
        RoomMakingEvent event = RoomMakingEvent.beginIfRecording();
        if (event == null) {
            return demote(tier, needed, excludeKey, failed, free, null);
        }
        int[] victims = new int[1];
        boolean needMet = false;
        try {
            needMet = demote(tier, needed, excludeKey, failed, free, victims);
            return needMet;
        } finally {
            RoomMakingEvent.finish(event, tier, needed, free, Math.max(0, free(tier) - free), victims[0], needMet);
        }
    }

    /**
     * The work of {@link #makeRoom} once {@code free} bytes are known to be too few.
     *
     * @param victims where to count the victims booked (null: not counted)
     */
    private boolean demote(Tier tier, long needed, String excludeKey, Failed failed, long free, int[] victims) {
        // Built for a second round only: a first round's candidates are all fresh (the policy names each once), and
        // most calls need one round.
        Set<SegmentHandle> tried = null; // handles are compared by identity: one per registration
        // Prefix blocks refused while a child of theirs was still here: once this call has moved victims (their
        // children among them, a chain's tail first), they are asked again, so one call peels a chain layer by
        // layer instead of backing off between layers.
        List<SegmentHandle> waitingForChildren = new ArrayList<>();
        // One pair of lists for all rounds of the call (emptied at the start of each): most calls have one round,
        // and a call nests inside another only through bookDemotion, which makes its own.
        List<Segment> locked = new ArrayList<>();
        List<Mover.Move> booked = new ArrayList<>();
        List<SegmentHandle> candidates = new ArrayList<>();
        long skipped = 0;
        // Bytes asked for beyond the need and the skipped: doubled after a round that booked nothing but refused a
        // block for its children (plain segments never are: their rounds are as before), so a run of
        // refusals (a chain's blocks met root first: each refused while its child is here) costs a few rounds, not
        // one round per block, each re-reading every candidate before it. Candidates are still tried in the
        // policy's order and taking stops once there is room: asking further changes only how far a round looks.
        long lookFurther = 0;
        // What a round aims at: the batch, when more than the need (see batchBytes). Whether the call succeeded is
        // still whether the need is met: a batch cut short by pins, refusals or a small tier costs no further round.
        long goal = Math.max(needed, batchBytes[tier.ordinal()]);
        // Whether every candidate met so far could go to no slower tier whatever room were made there (see Failed).
        boolean onlyTooLarge = tier != Tier.DISK;
        boolean metAny = false;
        while (true) {
            candidates.clear();
            store.candidatesForDemotion(tier, goal - free + skipped + lookFurther, candidates);
            int waitingBefore = waitingForChildren.size();
            boolean fresh = false;
            locked.clear();
            booked.clear();
            int iterated = 0;
            try {
                try {
                    while (iterated < candidates.size()) {
                        SegmentHandle candidate = candidates.get(iterated++);
                        if (tried != null && !tried.add(candidate)) {
                            continue;
                        }
                        fresh = true;
                        Segment victim = segmentOf(candidate);
                        // A lock this thread holds (reentrantly) marks a segment this very call is moving.
                        if (victim == null || isExcluded(victim.key, excludeKey) || victim.isHeldByCurrentThread()
                                || !victim.tryLock()) {
                            skipped += victim == null ? 0 : victim.sizeBytes;
                            onlyTooLarge = false;
                            continue;
                        }
                        metAny = true;
                        locked.add(victim);
                        if (tier == Tier.DISK) {
                            if (evicted(victim)) {
                                if (victims != null) {
                                    victims[0]++;
                                }
                                if (free(tier) >= goal) {
                                    break;
                                }
                            } else {
                                skipped += victim.sizeBytes;
                                if (victim.live && victim.liveChildren() > 0) {
                                    if (!victim.heldForChildren) {
                                        victim.heldForChildren = true; // before the hold: see releaseParent
                                        store.hold(victim.handle);
                                    }
                                    waitingForChildren.add(candidate);
                                }
                            }
                            continue;
                        }
                        // A block with a child here may go nowhere (every target is at least as slow as the next
                        // tier): refused before its tier is asked for and its move tried, a parent met root first.
                        boolean heldByChild = victim.live && victim.holdsChildFasterThan(slowerThan(tier));
                        boolean tooLarge = tooLargeForEveryTarget(victim, tier);
                        onlyTooLarge &= tooLarge;
                        Mover.Move move = !tooLarge && !heldByChild && victim.live && victim.pins == 0
                                && table.currentTier(victim) == tier ? bookDemotion(victim, tier, failed) : null;
                        if (move == null) {
                            skipped += victim.sizeBytes;
                            if (victim.liveChildren() > 0) {
                                if (heldByChild) {
                                    // Held here by a child until that child leaves (see releaseParent): the policy
                                    // names others meanwhile, or every later round reads and refuses it again.
                                    victim.heldForChildren = true; // before the hold: see releaseParent
                                    store.hold(victim.handle);
                                }
                                waitingForChildren.add(candidate);
                            }
                            continue;
                        }
                        booked.add(move);
                        if (victims != null) {
                            victims[0]++;
                        }
                        if (free(tier) >= goal) { // the store counts booked moves as gone
                            break;
                        }
                    }
                } catch (RuntimeException | Error e) {
                    RuntimeException reason = e instanceof RuntimeException r ? r : new CompletionException(e);
                    for (Mover.Move move : booked) {
                        undo(move.segment(), move.transfer(), move.destination(), reason);
                    }
                    throw e;
                }
                boolean evictedSome = tier == Tier.DISK && free(tier) > free;
                lookFurther = booked.isEmpty() && !evictedSome && waitingForChildren.size() > waitingBefore
                        ? Math.min(Long.MAX_VALUE / 4, 2 * lookFurther + needed) : 0;
                long notMoved = moveAll(booked, tier, failed);
                skipped += notMoved;
                if (!waitingForChildren.isEmpty() && (notMoved < bytesOf(booked) || evictedSome)) {
                    tried = tried != null ? tried : new HashSet<>(candidates.subList(0, iterated));
                    tried.removeAll(waitingForChildren);
                    waitingForChildren.clear();
                    fresh = true;
                }
            } finally {
                for (Segment victim : locked) {
                    victim.unlock();
                }
            }
            free = free(tier);
            if (free >= needed) {
                return true;
            }
            if (!fresh) {
                failed.noneCanLeave = onlyTooLarge && metAny && booked.isEmpty();
                return false;
            }
            if (tried == null) {
                tried = new HashSet<>(candidates.subList(0, iterated));
            }
        }
    }

    /**
     * Evicts a locked candidate from the DISK tier: removes it from the cache, tells the listeners and counts it,
     * unless it is not live there, pinned, or a block with a cached child (which must leave first).
     *
     * @return whether it was evicted
     */
    private boolean evicted(Segment victim) {
        if (!victim.live || victim.pins > 0 || victim.liveChildren() > 0 || table.currentTier(victim) != Tier.DISK) {
            return false;
        }
        Segment parent = victim.parent;
        table.drop(victim);
        listeners.removed(victim.key, Tier.DISK, victim.sizeBytes);
        counters.evicted();
        // Its parent's counts read without the parent's lock, as releaseParent does (and for the same reason harmless).
        if (parent != null && parent.heldForChildren && parent.liveChildren() == 0) {
            parent.heldForChildren = false; // its last child left: the policy may name it again
            store.release(parent.handle);
        }
        return true;
    }

    /**
     * The engine's segment of a candidate: the one registered with it (see {@link #register}), found with no key
     * lookup; by key for a handle registered without one. It may have been removed or moved since the store named
     * it: the caller checks, under its lock, that it is live and still on the tier.
     */
    private Segment segmentOf(SegmentHandle candidate) {
        return candidate.attachment() instanceof Segment segment ? segment : table.peek(candidate.key());
    }

    /**
     * Whether {@code candidate} is the key a call making room excludes. Hash codes first: they are cached in the key
     * strings (one line each), while an equal-length key's bytes are one more cold
     * line per candidate (every block key has the same length and, under one namespace, the same first 16 digits).
     */
    private static boolean isExcluded(String candidate, String excludeKey) {
        return excludeKey != null && candidate.hashCode() == excludeKey.hashCode() && candidate.equals(excludeKey);
    }

    private static long bytesOf(List<Mover.Move> moves) {
        long bytes = 0;
        for (Mover.Move move : moves) {
            bytes += move.segment().sizeBytes;
        }
        return bytes;
    }

    /** Whether {@code victim} is larger than the budget of every tier it could be demoted to from {@code tier}. */
    private boolean tooLargeForEveryTarget(Segment victim, Tier tier) {
        for (Tier target : cascade.targets(tier)) {
            if (victim.sizeBytes <= budget(target)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Books a locked victim's move down the cascade (making room on a bounded target first where
     * it would fit) and prepares it.
     *
     * @return the prepared move, or null when it cannot move (nothing changed)
     */
    private Mover.Move bookDemotion(Segment victim, Tier tier, Failed failed) {
        Optional<TierTransfer> transfer = Optional.empty();
        for (Tier target : cascade.targets(tier)) {
            if (victim.holdsChildFasterThan(target)) {
                // The prefix rule: a child of it is on a faster tier than this target (on this very tier, when
                // the victim must stay; on a tier between, when it may go no further down than that child).
                continue;
            }
            transfer = store.demote(victim.handle, target);
            long budget = budget(target);
            if (transfer.isEmpty() && budget != Long.MAX_VALUE && victim.sizeBytes <= budget
                    && makeRoom(target, victim.sizeBytes, victim.key, failed)) {
                transfer = store.demote(victim.handle, target);
            }
            if (transfer.isPresent()) {
                break;
            }
        }
        if (transfer.isEmpty()) {
            return null;
        }
        try {
            return prepare(victim, transfer.get());
        } catch (KvTierException e) {
            failed.note(e, "could not demote \"" + victim.key + "\" to make room on " + tier);
            return null;
        }
    }

    /**
     * {@link Mover#prepare}, making room when the destination tier is at its cap; on failure the booking
     * is undone and the error rethrown.
     */
    Mover.Move prepare(Segment segment, TierTransfer transfer) {
        return prepare(segment, transfer, SHORTAGE_PATIENCE);
    }

    /** {@link #prepare(Segment, TierTransfer)}, giving up after {@code patience} fruitless rounds of making room. */
    Mover.Move prepare(Segment segment, TierTransfer transfer, int patience) {
        try {
            return withRoom(segment.key, transfer.to(), segment.sizeBytes, patience, () -> mover.prepare(segment, transfer));
        } catch (RuntimeException | Error e) {
            throw undo(segment, transfer, null, e);
        }
    }

    /**
     * Runs a step that allocates pages for segment {@code key} on {@code tier}. When the tier's memory is
     * at its cap although the store counts room ({@link RoomShortage}: pages still held by moves in
     * flight, by pinned segments removed meanwhile, or by rounding to whole pages), demotes that many
     * bytes more and retries, in bounded rounds: a tier never holds more memory than its budget.
     *
     * @throws TierFullException when no more room could be made (the cause is the shortage)
     */
    <T> T withRoom(String key, Tier tier, long bytes, Supplier<T> step) {
        return withRoom(key, tier, bytes, SHORTAGE_PATIENCE, step);
    }

    /** {@link #withRoom(String, Tier, long, Supplier)}, giving up after {@code patience} fruitless rounds. */
    <T> T withRoom(String key, Tier tier, long bytes, int patience, Supplier<T> step) {
        RoomShortage first;
        try {
            return step.get(); // the pages are there: none of the machinery below
        } catch (RoomShortage shortage) {
            first = shortage;
        }
        RoomShortage[] last = {first};
        Failed failed = new Failed();
        int[] fruitless = new int[1];
        T done = retry(ROUNDS, () -> {
            if (fruitless[0] > patience) {
                return null; // see below: give the logical room back to whoever holds the pages
            }
            try {
                return step.get();
            } catch (RoomShortage shortage) {
                last[0] = shortage;
                return null;
            }
        }, () -> {
            if (fruitless[0] > patience) {
                return true;
            }
            boolean progress = makeRoom(last[0].tier, free(last[0].tier) + last[0].shortBytes, key, failed);
            // Nothing demotable: the pages belong to moves in flight, which may themselves be waiting for the
            // logical room this call holds (a failed move rolling back). Give up soon, as "retry", not after
            // every round: that lets them finish.
            fruitless[0] = progress ? 0 : fruitless[0] + 1;
            return progress;
        }, true);
        if (done == null) {
            throw new TierFullException(key, last[0].tier, bytes, free(last[0].tier), "its memory is at its budget and "
                    + "no more could be freed (" + last[0].getMessage() + "; pinned segments, or segments removed while"
                    + " pinned, hold the rest)", last[0].getCause());
        }
        return done;
    }

    /**
     * Carries out a booked transfer for a locked segment: prepare, copy, commit; on any failure the
     * booking is undone and the error rethrown.
     */
    void move(Segment segment, TierTransfer transfer) {
        Mover.Move move = prepare(segment, transfer);
        try {
            mover.copy(move);
        } catch (RuntimeException | Error e) {
            throw undo(segment, transfer, move.destination(), e);
        }
        mover.commit(move);
        if (transfer.to().isFasterThan(transfer.from())) {
            return;
        }
        releaseParent(segment, transfer.from());
    }

    /**
     * A block left {@code tier}: when that was its parent's last child there or faster, the parent may leave too
     * ({@link TieredStore#release}, ending a {@link TieredStore#hold} from an earlier refusal; asked only when
     * there was one, {@link Segment#heldForChildren}). Reads the parent's
     * counts without its lock: a release that comes too early only gets the parent named, refused and held again,
     * and the policy names held segments when nothing else is left.
     */
    void releaseParent(Segment block, Tier tier) {
        Segment parent = block.parent;
        if (parent != null && parent.heldForChildren && !parent.holdsChildFasterThan(slowerThan(tier))) {
            // A hold racing with this (its flag set before our read, its hold after our release) stays, as a
            // release that came too early always did: see above.
            parent.heldForChildren = false;
            store.release(parent.handle);
        }
    }

    /** The next slower tier (DISK for DISK): a block held by children on {@code tier} or faster cannot go there. */
    static Tier slowerThan(Tier tier) {
        return tier == Tier.GPU ? Tier.CPU : Tier.DISK;
    }

    /**
     * Moves the bytes of booked demotions together and commits each; each one whose copy failed is
     * rolled back (or, with no room left to roll back into, removed) and logged.
     *
     * @return the bytes of the victims that did not move
     */
    private long moveAll(List<Mover.Move> moves, Tier tier, Failed failed) {
        Throwable[] failures = mover.copyAll(moves);
        long notMoved = 0;
        for (int i = 0; i < moves.size(); i++) {
            Mover.Move move = moves.get(i);
            if (failures[i] == null) {
                mover.commit(move);
                releaseParent(move.segment(), tier);
                continue;
            }
            Segment victim = move.segment();
            notMoved += victim.sizeBytes;
            TransferFailedException error = Failures.copyFailed(victim.key, move.transfer().from(), move.transfer().to(),
                    failures[i]);
            RuntimeException outcome = undo(victim, move.transfer(), move.destination(), error);
            failed.note(outcome, "could not demote \"" + victim.key + "\" to make room on " + tier);
        }
        return notMoved;
    }

    /**
     * A booked transfer failed: frees {@code destination} (may be null), puts the segment back where
     * it was in the store (or, when that tier has no room left, removes it), and returns what to throw.
     */
    RuntimeException undo(Segment segment, TierTransfer transfer, PageAllocation destination, Throwable e) {
        if (destination != null) {
            mover.abort(new Mover.Move(segment, transfer, destination));
        }
        if (!rollBack(segment, transfer)) {
            table.drop(segment);
            listeners.removed(segment.key, transfer.from(), segment.sizeBytes);
            LOG.log(System.Logger.Level.ERROR, "segment \"" + segment.key + "\" removed: " + transfer
                    + " failed and no room came free on " + transfer.from() + " to roll it back: " + e);
            return new TransferFailedException(segment.key, transfer.from(), transfer.to(), "moving segment \""
                    + segment.key + "\" failed (" + e.getMessage() + ") and " + transfer.from()
                    + " had no room left to take it back, so it was removed", e);
        }
        return Failures.rethrow(e);
    }

    /**
     * Puts a locked segment back on the tier its failed move came from. Others may have taken that
     * room meanwhile (the move freed it); then make room there again, as for any arrival.
     */
    private boolean rollBack(Segment segment, TierTransfer transfer) {
        Failed failed = new Failed();
        return retry(() -> store.rollback(transfer) ? Boolean.TRUE : null,
                () -> makeRoom(transfer.from(), segment.sizeBytes, segment.key, failed)) != null;
    }

    private long budget(Tier tier) {
        return switch (tier) {
            case GPU -> store.gpuBudget();
            case CPU -> store.cpuBudget();
            case DISK -> store.diskBudget();
        };
    }

    /** Bytes free on {@code tier} in the store's books ({@link Long#MAX_VALUE} for an unbounded DISK tier). */
    long free(Tier tier) {
        return switch (tier) {
            case GPU -> store.gpuFree();
            case CPU -> store.cpuFree();
            case DISK -> store.diskBudget() == Long.MAX_VALUE ? Long.MAX_VALUE : store.diskFree();
        };
    }
}
