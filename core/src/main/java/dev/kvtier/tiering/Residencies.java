package dev.kvtier.tiering;

import dev.kvtier.ResidentSegment;
import dev.kvtier.concurrent.KvTierThreads;
import dev.kvtier.store.Tier;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.function.BiFunction;

/**
 * Single flight for making segments resident: concurrent calls for the same key and tier share one
 * transfer. A blocking call that finds none in flight does the work on its own thread (no
 * hand-off); an async one runs it on a kvtier thread. Each claim enters the {@link OperationGate};
 * only the owner's work keeps the cache busy. Thread-safe.
 */
final class Residencies {
    private record Residency(String key, Tier tier) { }

    /** A call's part in making a segment resident: it does the work ({@code owner}) or shares the future of the call that does. */
    private record Claim(Residency residency, CompletableFuture<ResidentSegment> future, boolean owner) { }

    private final OperationGate gate;
    private final BiFunction<String, Tier, ResidentSegment> makeResident;
    private final ConcurrentHashMap<Residency, CompletableFuture<ResidentSegment>> inFlight = new ConcurrentHashMap<>();
    /** Set on the orchestrator's own threads: a close from one of them (a future's dependent) must not wait for itself. */
    private static final ThreadLocal<Boolean> ON_ORCHESTRATOR = ThreadLocal.withInitial(() -> Boolean.FALSE);
    private final ExecutorService orchestrator;

    /** @param makeResident does the work, with the gate entered, on the calling thread */
    Residencies(OperationGate gate, BiFunction<String, Tier, ResidentSegment> makeResident) {
        this.gate = gate;
        ThreadFactory threads = KvTierThreads.factory("resident");
        this.orchestrator = Executors.newCachedThreadPool(task -> threads.newThread(() -> {
            ON_ORCHESTRATOR.set(Boolean.TRUE);
            task.run();
        }));
        this.makeResident = makeResident;
    }

    /** Makes {@code key} resident on {@code tier} or faster and returns when its bytes are in place. */
    ResidentSegment ensureResident(String key, Tier tier) {
        Claim claim = claim(key, tier);
        // No call for this key and tier was in flight: do the work on this thread (no hand-off).
        return join(claim.owner() ? run(claim.residency(), claim.future()) : claim.future());
    }

    /** As {@link #ensureResident}, without blocking; the returned future is the caller's own copy. */
    CompletableFuture<ResidentSegment> ensureResidentAsync(String key, Tier tier) {
        Claim claim = claim(key, tier);
        if (claim.owner()) {
            try {
                orchestrator.execute(() -> run(claim.residency(), claim.future()));
            } catch (RejectedExecutionException e) {
                inFlight.remove(claim.residency(), claim.future());
                gate.exit();
                throw new IllegalStateException("the cache is closed", e);
            }
        }
        return claim.future().copy();
    }

    /**
     * Enters; then publishes a new future for the key and tier, or takes the one in flight and exits
     * again (only the owner's work keeps the cache busy).
     */
    private Claim claim(String key, Tier tier) {
        gate.enter();
        Residency residency = new Residency(key, tier);
        CompletableFuture<ResidentSegment> mine = new CompletableFuture<>();
        CompletableFuture<ResidentSegment> shared = inFlight.putIfAbsent(residency, mine);
        if (shared != null) {
            gate.exit();
            return new Claim(residency, shared, false);
        }
        return new Claim(residency, mine, true);
    }

    /** Makes the segment resident, then unpublishes and completes the shared future; balances the claim's enter. */
    private CompletableFuture<ResidentSegment> run(Residency residency, CompletableFuture<ResidentSegment> shared) {
        ResidentSegment result = null;
        Throwable failure = null;
        try {
            result = makeResident.apply(residency.key(), residency.tier());
        } catch (Throwable t) {
            failure = t;
        }
        inFlight.remove(residency, shared);
        gate.exit();
        if (failure == null) {
            shared.complete(result);
        } else {
            shared.completeExceptionally(failure);
        }
        return shared;
    }

    private static ResidentSegment join(CompletableFuture<ResidentSegment> future) {
        try {
            return future.join();
        } catch (CompletionException e) {
            throw Failures.rethrow(e.getCause());
        }
    }

    /**
     * After the gate closed (no work in flight): stops the orchestrator's threads, first letting them complete
     * the futures of the residencies they ran (the work is done, but a future is completed after its residency
     * leaves the gate, so that a dependent that closes the cache does not wait for itself), so that every async
     * call made before close is done when close returns. Not waited for from an orchestrator thread, and only
     * until {@code deadlineNanos} ({@link System#nanoTime}; a dependent may block).
     */
    void shutdown(long deadlineNanos) {
        orchestrator.shutdown();
        if (ON_ORCHESTRATOR.get()) {
            return;
        }
        Completions.awaitUntil(orchestrator, deadlineNanos, "ensureResidentAsync dependents");
    }
}
