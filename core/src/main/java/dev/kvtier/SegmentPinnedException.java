package dev.kvtier;

/**
 * Thrown when a call would move a segment that is pinned ({@link KvTierCache#pin}): an explicit
 * {@link KvTierCache#demote} or {@link KvTierCache#promote}, or {@link KvTierCache#ensureResident}
 * on a tier faster than the one it is pinned on. Nothing changed; close the pins, then retry.
 */
public final class SegmentPinnedException extends KvTierException {
    private static final long serialVersionUID = 1L;
    /** How many pins were open. */
    private final int openPins;

    /**
     * A call refused because the segment is pinned.
     *
     * @param key      the pinned segment
     * @param openPins how many pins on it are open
     * @param action   what was refused, e.g. {@code "demote it to CPU"}
     */
    public SegmentPinnedException(String key, int openPins, String action) {
        super(key, "cannot " + action + ": segment \"" + key + "\" is pinned (" + openPins + " pin"
                + (openPins == 1 ? "" : "s") + " open); close them first", null);
        this.openPins = openPins;
    }

    /**
     * How many pins on the segment were open when the call was refused.
     *
     * @return the number of open pins
     */
    public int openPins() {
        return openPins;
    }
}
