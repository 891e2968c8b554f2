package dev.kvtier;

import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What a persistent cache found when it opened its disk directory ({@link KvTierCache#recovery()}):
 * the segments registered again on DISK, those discarded and why, how long it took. Feeds a recovery
 * event, metrics, and anything that must re-announce what the disk holds ({@link #recoveredKeys()}).
 * A snapshot: {@link #failedFirstUse()} grows as lazily verified segments fail their first check.
 * Immutable.
 *
 * @param namespace        the namespace the directory was opened under
 * @param recovered        segments registered on DISK by the open (after eager verification, if asked)
 * @param recoveredBytes   their bytes (not rounded to pages)
 * @param discarded        per reason, records or segments discarded by the open; never served
 * @param failedFirstUse   recovered segments whose bytes failed their CRC32C on first use since (dropped)
 * @param journalBytes     the journal's size before the open compacted it
 * @param duration         how long the open spent recovering (journal read, registration, verification)
 * @param wipedBecause     when the directory was wiped ({@link DiskPersistence.OnMismatch#WIPE}), why
 * @param recoveredKeys    the keys registered by the open, in journal order
 * @param repairs          what the open found damaged or out of date in the journal itself and rewrote, one
 *                         sentence each: a header copy that failed a check (naming the check; the other copy was
 *                         used), a journal migrated from an older format
 */
public record RecoveryReport(String namespace, int recovered, long recoveredBytes, Map<DiscardReason, Long> discarded,
                             long failedFirstUse, long journalBytes, Duration duration, Optional<String> wipedBecause,
                             List<String> recoveredKeys, List<String> repairs) {

    /** Why a persisted record or segment was not registered again. */
    public enum DiscardReason {
        /** The journal ended inside a record (the writer died while appending it). */
        TORN_RECORD,
        /** A record's checksum, magic or fields were wrong (the bytes between two good records were skipped). */
        CORRUPT_RECORD,
        /** Its pages lie in an extent file that is missing or of the wrong size. */
        EXTENT_MISSING,
        /** A later record claimed some of its pages (a removal record that never reached the journal). */
        OVERLAPPED,
        /**
         * A rollback refused: its pages carry another generation than its record (a later removal or rewrite
         * of its key, or a reuse of its pages, whose record the journal lost), so serving it could bring back
         * an older version of its key, or a key that was removed. See {@link #rollbacksRefused()}.
         */
        SUPERSEDED,
        /** Its bytes did not match its CRC32C in eager verification. */
        CHECKSUM_MISMATCH,
        /**
         * A prefix block whose parent block was not recovered (never persisted, or itself discarded): without
         * its parent it can never be reached as part of a chain.
         */
        ORPHANED,
        /**
         * It did not fit in the DISK budget ({@link KvTierConfig#diskBudgetBytes()}), smaller than the one it was
         * written under; the segments recovered first (in the journal's order, parents before children) were kept.
         */
        OVER_BUDGET
    }

    /** Copies the collections. */
    public RecoveryReport {
        EnumMap<DiscardReason, Long> counts = new EnumMap<>(DiscardReason.class);
        for (DiscardReason reason : DiscardReason.values()) {
            counts.put(reason, discarded.getOrDefault(reason, 0L));
        }
        discarded = Map.copyOf(counts);
        recoveredKeys = List.copyOf(recoveredKeys);
        repairs = List.copyOf(repairs);
    }

    /**
     * Records the open refused to serve because a newer state of their pages was recorded and then lost
     * from the journal ({@link DiscardReason#SUPERSEDED}): each would have rolled a key back to an older
     * version, or brought back a removed key.
     *
     * @return the number of rollbacks refused, {@code >= 0}
     */
    public long rollbacksRefused() {
        return discarded.get(DiscardReason.SUPERSEDED);
    }

    /**
     * Records and segments discarded, all reasons together.
     *
     * @return the sum of the discards over every reason, {@code >= 0}
     */
    public long discardedTotal() {
        return discarded.values().stream().mapToLong(Long::longValue).sum();
    }

    @Override
    public String toString() {
        return "RecoveryReport[namespace=" + namespace + ", recovered=" + recovered + " (" + recoveredBytes
                + " bytes), discarded=" + discarded + ", rollbacksRefused=" + rollbacksRefused() + ", failedFirstUse="
                + failedFirstUse + ", journal=" + journalBytes + " bytes, " + duration.toMillis() + " ms"
                + wipedBecause.map(w -> ", wiped: " + w).orElse("") + (repairs.isEmpty() ? "" : ", repaired: " + repairs)
                + "]";
    }
}
