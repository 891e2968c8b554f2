package dev.kvtier.tiering;

import dev.kvtier.CacheOpenException;
import dev.kvtier.TransferFailedException;
import dev.kvtier.exec.BackendUnusableException;
import dev.kvtier.store.Tier;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.concurrent.CompletionException;

/**
 * The one translator from low-level failures (a {@code CudaException}, an I/O error, the
 * {@link InternalError} of a fault in a file mapping, each possibly wrapped in the
 * {@link CompletionException} of a future) to the cache's domain exceptions. Every path that copies
 * or allocates hands its failure here, so the unwrapping and the wording live in one place. A dead
 * CUDA context (a {@link BackendUnusableException} anywhere in the cause chain) becomes a
 * {@link TransferFailedException} that names the sticky error and says, in tiers, what is lost (GPU)
 * and what stays readable (CPU, DISK).
 */
final class Failures {
    private Failures() {
    }

    /** What really failed: the cause of a {@link CompletionException}, else {@code failure} itself. */
    static Throwable cause(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

    /**
     * A failed copy of segment {@code key}: from {@code from} (null: the caller's memory) to {@code to}
     * (null: the caller's memory), with the real cause.
     */
    static TransferFailedException copyFailed(String key, Tier from, Tier to, Throwable failure) {
        Throwable cause = cause(failure);
        BackendUnusableException unusable = unusable(cause);
        if (unusable != null) {
            return new TransferFailedException(key, from, to, "copying segment \"" + key + "\" "
                    + (from == null ? "in" : "from " + from) + (to == null ? " out" : " to " + to) + " failed: "
                    + unusableWords(unusable), unusable);
        }
        return new TransferFailedException(key, from, to, "copying segment \"" + key + "\" "
                + (from == null ? "in" : "from " + from) + (to == null ? " out" : " to " + to) + " failed: " + cause, cause);
    }

    /** Memory for segment {@code key} could not be had on {@code tier} (the cause says what ran out and the fix). */
    static TransferFailedException allocationFailed(String key, Tier from, Tier tier, long bytes, Exception cause) {
        BackendUnusableException unusable = unusable(cause);
        if (unusable != null) {
            return new TransferFailedException(key, from, tier, "cannot allocate " + bytes + " bytes on " + tier
                    + " for segment \"" + key + "\": " + unusableWords(unusable), cause);
        }
        return new TransferFailedException(key, from, tier, "cannot allocate " + bytes + " bytes on " + tier
                + " for segment \"" + key + "\": " + cause.getMessage(), cause);
    }

    /**
     * An open that could not {@code what} (e.g. "create the disk directory /x"): the real reason in the message,
     * not only in the cause, and the fix. Names the directory, never the whole configuration.
     */
    static CacheOpenException openFailed(String what, IOException cause) {
        return new CacheOpenException("cannot " + what + ": " + reason(cause)
                + " (set KvTierConfig.builder().diskDirectory(...) to a writable directory)", cause);
    }

    /**
     * The reason of a file-system failure in words: the JDK's {@code FileSystemException}s carry only the path
     * as their message for the commonest reasons (a regular file where a directory must be, no permission),
     * which reads as if the path were the reason.
     */
    static String reason(IOException failure) {
        if (failure instanceof FileSystemException e) {
            String file = e.getFile() == null ? "" : e.getFile() + " ";
            Path regularFile = e.getFile() == null ? null : regularFileAtOrAbove(Path.of(e.getFile()));
            if (regularFile != null) { // the path, or a directory it needs, is a file: "Not a directory" or "exists"
                return regularFile + " is a regular file, not a directory";
            }
            if (e instanceof FileAlreadyExistsException || e instanceof NotDirectoryException) {
                return file + "exists and is not a directory";
            }
            if (e instanceof AccessDeniedException) {
                return file + "permission denied";
            }
            if (e instanceof NoSuchFileException) {
                return file + "does not exist";
            }
            if (e.getReason() != null) {
                return file + e.getReason().toLowerCase(java.util.Locale.ROOT);
            }
        }
        return failure.getMessage() == null ? failure.toString() : failure.getMessage();
    }

    /** {@code path} or the nearest of its ancestors that exists, when that is a regular file; else null. */
    private static Path regularFileAtOrAbove(Path path) {
        for (Path at = path.toAbsolutePath(); at != null; at = at.getParent()) {
            if (Files.exists(at)) {
                return Files.isRegularFile(at) ? at : null;
            }
        }
        return null;
    }

    /** The {@link BackendUnusableException} in {@code failure}'s cause chain, or null. */
    private static BackendUnusableException unusable(Throwable failure) {
        for (Throwable t = failure; t != null && t.getCause() != t; t = t.getCause()) {
            if (t instanceof BackendUnusableException u) {
                return u;
            }
        }
        return null;
    }

    /**
     * A dead CUDA context in the cache's words: what is lost, what stays, what to do. The exec
     * exception speaks of memory kinds; here they are tiers.
     */
    private static String unusableWords(BackendUnusableException unusable) {
        return "the CUDA backend is unusable after the sticky error " + unusable.error() + " (every later CUDA call"
                + " fails with it): segments on GPU are lost, segments on CPU and DISK stay readable (read, demote"
                + " to DISK); to use the GPU again, close the cache and reopen it in a new process or after a device reset";
    }

    /** {@code failure} as a runtime exception to throw (errors are thrown from here as they are). */
    static RuntimeException rethrow(Throwable failure) {
        if (failure instanceof RuntimeException r) {
            return r;
        }
        if (failure instanceof Error e) {
            throw e;
        }
        return new CompletionException(failure);
    }
}
