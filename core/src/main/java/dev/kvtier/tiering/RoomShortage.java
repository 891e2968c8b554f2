package dev.kvtier.tiering;

import dev.kvtier.store.Tier;

/**
 * A tier's memory is at its cap (its budget) although the store counts room: pages are still held by
 * moves in flight, by pinned segments removed meanwhile, or by the rounding of segments to whole
 * pages. Thrown by the {@link Mover} when it allocates; the {@link RoomMaker} answers by demoting
 * {@link #shortBytes} more and retrying. Never leaves the tiering layer.
 */
final class RoomShortage extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final Tier tier;
    final long shortBytes;

    RoomShortage(Tier tier, long shortBytes, Throwable cause) {
        super(cause.getMessage(), cause, false, false);
        this.tier = tier;
        this.shortBytes = shortBytes;
    }
}
