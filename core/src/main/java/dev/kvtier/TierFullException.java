package dev.kvtier;

import dev.kvtier.store.Tier;

/**
 * A tier has no room for a segment and none could be made: the segment is larger than the tier's
 * budget, or every segment that could have been demoted is in use (being moved or made resident by
 * another call), or moving the candidates out failed (then {@link #getCause()} is that failure, e.g.
 * a full disk). Nothing was changed; retrying later, or with a larger budget, may succeed.
 */
public final class TierFullException extends KvTierException {
    private static final long serialVersionUID = 1L;
    private final Tier tier;
    private final long neededBytes;
    private final long freeBytes;

    /** @param tier the full tier; @param neededBytes the segment's size; @param freeBytes what the tier had free */
    public TierFullException(String key, Tier tier, long neededBytes, long freeBytes, String why) {
        this(key, tier, neededBytes, freeBytes, why, null);
    }

    /**
     * As {@link #TierFullException(String, Tier, long, long, String)}, with what kept room from being
     * made (a failed demotion of a candidate), or null.
     */
    public TierFullException(String key, Tier tier, long neededBytes, long freeBytes, String why, Throwable cause) {
        super(key, "no room on " + tier + " for segment \"" + key + "\" (" + neededBytes + " bytes, "
                + freeBytes + " free): " + why, cause);
        this.tier = tier;
        this.neededBytes = neededBytes;
        this.freeBytes = freeBytes;
    }

    /** The tier that had no room. */
    public Tier tier() {
        return tier;
    }

    /** The bytes that were needed. */
    public long neededBytes() {
        return neededBytes;
    }

    /** The bytes that were free on the tier when the call gave up. */
    public long freeBytes() {
        return freeBytes;
    }
}
