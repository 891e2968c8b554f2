package dev.kvtier.store;

/**
 * An opaque reference to one registration of a segment in one {@link TieredStore}, for callers that keep
 * their own record per segment and would otherwise look the same key up twice (their map, then the
 * store's): the handle-taking methods of the store skip the store's hash lookup. Obtained from
 * {@link TieredStore#registerHandle} or {@link TieredStore#handle}.
 *
 * <p><b>Staleness.</b> A handle names one registration: once that segment is removed the handle is stale
 * for good, and the store answers a stale handle exactly as its key-based method answers an unknown key
 * (false, empty or null), even if the key has been registered again meanwhile (that registration has a
 * new handle). A handle never keeps a segment registered; a stale one still holds the store's old record
 * of it (about 100 bytes) in memory until the handle itself is dropped.
 *
 * <p><b>Errors.</b> A handle belongs to the store that issued it: passing it to another store, or passing
 * null, throws {@link IllegalArgumentException} naming it.
 *
 * <p><b>Thread safety.</b> Immutable as seen by its holder, and safe to share between threads: every
 * handle-taking method is atomic in the same way as its key-based twin, including against a concurrent
 * removal (the call then either sees the segment or answers as for a stale handle). Identity is the
 * handle's equality. The handle is the store's own record of the segment, so it costs nothing to keep;
 * casting it to anything else is unsupported.
 */
public sealed interface SegmentHandle permits SegmentEntry {

    /**
     * The key the segment was registered under; stays readable when the handle is stale.
     *
     * @return the key, never null
     */
    String key();

    /**
     * The object given to {@link TieredStore#registerHandle(SegmentMeta, Tier, Object)} for this registration,
     * or null: the caller's own record of the segment, so that a handle from
     * {@link TieredStore#candidatesForDemotion(Tier, long, java.util.List)} leads to it with no lookup of the
     * caller's own by key. Set once at registration, never changed; stays readable when the handle is stale.
     *
     * @return the attachment given at registration, or null when none was
     */
    Object attachment();
}
