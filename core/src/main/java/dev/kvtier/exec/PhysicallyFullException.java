package dev.kvtier.exec;

import java.io.IOException;

/**
 * A capped memory ({@code PagedMemory} with a chunk limit: the GPU and CPU tiers, sized to their
 * budgets) has no free pages for a request and may not grow: the pages are held by segments the
 * logical layer already counts as gone (moves in flight), by pinned segments removed meanwhile, or
 * by the rounding of segments up to whole pages. The caller makes {@link #shortBytes()} more room
 * and retries, instead of the memory growing past its budget.
 */
public final class PhysicallyFullException extends IOException {
    private static final long serialVersionUID = 1L;
    private final long shortBytes;

    /** @param shortBytes how many more bytes of pages the request needs than are free */
    public PhysicallyFullException(StorageKind kind, long requestedBytes, long shortBytes, long capBytes) {
        super("the " + kind + " memory is at its cap of " + capBytes + " bytes: " + requestedBytes
                + " bytes requested, " + shortBytes + " bytes short");
        this.shortBytes = shortBytes;
    }

    /**
     * No stack trace: this is the expected answer of a full tier, met on the request path whenever a tier
     * runs at its budget, and the caller turns it into room made or into a {@code TierFullException} of its
     * own (which has one). Filling in a deep stack cost more than the allocation it answers.
     */
    @Override
    public synchronized Throwable fillInStackTrace() {
        return this;
    }

    /** Bytes of pages missing for the request. */
    public long shortBytes() {
        return shortBytes;
    }
}
