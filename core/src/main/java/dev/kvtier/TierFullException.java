package dev.kvtier;

import dev.kvtier.store.Tier;

import java.util.List;

/**
 * A tier has no room for a segment and none could be made: the segment is larger than the tier's
 * budget, or every segment that could have been demoted is in use (being moved or made resident by
 * another call), or moving the candidates out failed (then {@link #getCause()} is that failure, e.g.
 * a full disk). Nothing was changed; retrying later, or with a larger budget, may succeed.
 *
 * <p>Where room was needed for several segments together (a prefix's blocks, restored all or nothing), the
 * exception names them all ({@link #keys()}; {@link #key()} is the first) and {@link #neededBytes()} is their
 * bytes together.
 */
public final class TierFullException extends KvTierException {
    private static final long serialVersionUID = 1L;
    /** The tier that had no room. */
    private final Tier tier;
    /** The bytes that were needed. */
    private final long neededBytes;
    /** The bytes that were free. */
    private final long freeBytes;
    /** The segments room was needed for. */
    private final List<String> keys;

    /**
     * No room for segment {@code key}.
     *
     * @param key         the segment that needed room
     * @param tier        the full tier
     * @param neededBytes the segment's size
     * @param freeBytes   what the tier had free
     * @param why         why no room could be made, as the end of the message
     */
    public TierFullException(String key, Tier tier, long neededBytes, long freeBytes, String why) {
        this(key, tier, neededBytes, freeBytes, why, null);
    }

    /**
     * As {@link #TierFullException(String, Tier, long, long, String)}, with what kept room from being
     * made (a failed demotion of a candidate), or null.
     *
     * @param key         the segment that needed room
     * @param tier        the full tier
     * @param neededBytes the segment's size
     * @param freeBytes   what the tier had free
     * @param why         why no room could be made, as the end of the message
     * @param cause       the failure that kept room from being made, or null
     */
    public TierFullException(String key, Tier tier, long neededBytes, long freeBytes, String why, Throwable cause) {
        super(key, "no room on " + tier + " for segment \"" + key + "\" (" + neededBytes + " bytes, "
                + freeBytes + " free): " + why, cause);
        this.tier = tier;
        this.neededBytes = neededBytes;
        this.freeBytes = freeBytes;
        this.keys = List.of(key);
    }

    /**
     * No room for the segments {@code keys} together ({@code neededBytes} is theirs together).
     *
     * @param keys        at least one key, in the order the call gave them
     * @param tier        the full tier
     * @param neededBytes the segments' sizes together
     * @param freeBytes   what the tier had free
     * @param why         why no room could be made, as the end of the message
     * @param cause       the failure that kept room from being made, or null
     */
    public TierFullException(List<String> keys, Tier tier, long neededBytes, long freeBytes, String why, Throwable cause) {
        super(keys.getFirst(), "no room on " + tier + " for " + named(keys) + " (" + neededBytes + " bytes"
                + (keys.size() == 1 ? "" : " together") + ", " + freeBytes + " free): " + why, cause);
        this.tier = tier;
        this.neededBytes = neededBytes;
        this.freeBytes = freeBytes;
        this.keys = List.copyOf(keys);
    }

    /** The keys named in a message: every one of a few, the first and the last of many. */
    private static String named(List<String> keys) {
        if (keys.size() == 1) {
            return "segment \"" + keys.getFirst() + "\"";
        }
        if (keys.size() <= 4) {
            return "the " + keys.size() + " segments \"" + String.join("\", \"", keys) + "\"";
        }
        return "the " + keys.size() + " segments \"" + keys.getFirst() + "\" .. \"" + keys.getLast() + "\"";
    }

    /**
     * The keys of every segment room was needed for: one, or several needing room together.
     *
     * @return an unmodifiable list of at least one key, in the order the call gave them
     */
    public List<String> keys() {
        return keys;
    }

    /**
     * The tier that had no room.
     *
     * @return the tier
     */
    public Tier tier() {
        return tier;
    }

    /**
     * The bytes that were needed.
     *
     * @return the size of the segment, or of the segments together
     */
    public long neededBytes() {
        return neededBytes;
    }

    /**
     * The bytes that were free on the tier when the call gave up.
     *
     * @return the free bytes, {@code >= 0}
     */
    public long freeBytes() {
        return freeBytes;
    }
}
