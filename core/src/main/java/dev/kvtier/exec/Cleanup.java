package dev.kvtier.exec;

/**
 * Runs every step of a close even when some fail: {@link #rethrowFirst()}, after the last step, throws
 * the first failure with the later ones suppressed on it. Not thread-safe (one closing thread).
 */
public final class Cleanup {
    private RuntimeException failure;

    /** Runs {@code step}, keeping its failure for {@link #rethrowFirst()}. */
    public void run(Runnable step) {
        try {
            step.run();
        } catch (RuntimeException e) {
            if (failure == null) {
                failure = e;
            } else {
                failure.addSuppressed(e);
            }
        }
    }

    /** Throws the first step failure, if any. */
    public void rethrowFirst() {
        if (failure != null) {
            throw failure;
        }
    }
}
