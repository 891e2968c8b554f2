package dev.kvtier.bench.sim;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import dev.kvtier.ByteSizes;
import dev.kvtier.RemoteRejection;
import dev.kvtier.RemoteStoreStats;

/**
 * The summary lines of a run with {@code --remote}: the share of block references served from the remote store, the
 * store's traffic (blocks and bytes fetched and written), the values it returned that were not served, by cause, the
 * writes dropped and the failed calls. Stateless.
 */
final class RemoteSummary {
    private RemoteSummary() {
    }

    /**
     * The rows, or none when {@code stats} says no store was configured.
     *
     * @param store       the store as given on the command line
     * @param stats       the store traffic (summed over the ranks with {@code --ranks})
     * @param foundRemote block references whose block was fetched from the store
     * @param references  block references played
     * @param blockBytes  bytes of one block (a value in the store holds them and a signed header)
     */
    static List<String[]> rows(String store, RemoteStoreStats stats, long foundRemote, long references, int blockBytes) {
        List<String[]> rows = new ArrayList<>();
        if (!stats.configured()) {
            return rows;
        }
        rows.add(SummaryTable.row("remote store", store + (stats.down() ? "  (marked down at the end of the run)" : "")));
        rows.add(SummaryTable.row("remote hits", String.format(Locale.ROOT,
                "%,d blocks, %.2f%% of %,d block references (fetched because missing locally); look-ups found %,d,"
                        + " %,d left out by the cost gate", foundRemote, references == 0 ? 0.0 : 100.0 * foundRemote / references,
                references, stats.remoteBlocksFound(), stats.gatedBlocks())));
        rows.add(SummaryTable.row("remote bytes", String.format(Locale.ROOT,
                "fetched %s in %,d blocks served; written %,d blocks (%s of block bytes, without the values' headers)",
                ByteSizes.format(stats.bytesFetched()), stats.blocksFetched(), stats.blocksWritten(),
                ByteSizes.format(stats.blocksWritten() * blockBytes))));
        StringBuilder causes = new StringBuilder();
        for (RemoteRejection cause : RemoteRejection.values()) {
            if (stats.rejections(cause) > 0) {
                causes.append(causes.isEmpty() ? " (" : ", ").append(cause.name().toLowerCase(Locale.ROOT).replace('_', '-'))
                        .append(' ').append(stats.rejections(cause));
            }
        }
        rows.add(SummaryTable.row("remote rejections", String.format(Locale.ROOT, "%,d values not served%s",
                stats.rejections(), causes.isEmpty() ? "" : causes + ")")));
        rows.add(SummaryTable.row("remote writes dropped", String.format(Locale.ROOT,
                "%,d (queue full, or the store down)", stats.writesDropped())));
        rows.add(SummaryTable.row("remote failures", String.format(Locale.ROOT,
                "%,d calls failed or timed out (each a miss, never an error to the run)", stats.failures())));
        return rows;
    }

    /**
     * The sum of the ranks' stats, as a rank reports them ({@link #encode}); the averages and estimates are left 0 (one
     * rank's are not the cluster's).
     */
    static RemoteStoreStats sum(List<RemoteStoreStats> ranks) {
        long[] rejections = new long[RemoteRejection.values().length];
        long found = 0;
        long gated = 0;
        long fetched = 0;
        long bytes = 0;
        long written = 0;
        long dropped = 0;
        long failures = 0;
        boolean configured = false;
        boolean down = false;
        for (RemoteStoreStats s : ranks) {
            configured |= s.configured();
            down |= s.down();
            found += s.remoteBlocksFound();
            gated += s.gatedBlocks();
            fetched += s.blocksFetched();
            bytes += s.bytesFetched();
            written += s.blocksWritten();
            dropped += s.writesDropped();
            failures += s.failures();
            for (RemoteRejection cause : RemoteRejection.values()) {
                rejections[cause.ordinal()] += s.rejections(cause);
            }
        }
        return new RemoteStoreStats(configured, down, found, gated, fetched, bytes, written, dropped, failures, rejections,
                0, 0, 0, 0);
    }

    /** The counters of {@code stats} as one line of words without spaces, for a rank's answer. */
    static String encode(RemoteStoreStats stats) {
        StringBuilder line = new StringBuilder();
        line.append(stats.configured() ? 1 : 0).append(',').append(stats.down() ? 1 : 0).append(',')
                .append(stats.remoteBlocksFound()).append(',').append(stats.gatedBlocks()).append(',')
                .append(stats.blocksFetched()).append(',').append(stats.bytesFetched()).append(',')
                .append(stats.blocksWritten()).append(',').append(stats.writesDropped()).append(',')
                .append(stats.failures());
        for (long n : stats.rejectionsByCause()) {
            line.append(',').append(n);
        }
        return line.toString();
    }

    /** What {@link #encode} wrote. */
    static RemoteStoreStats decode(String word) {
        String[] f = word.split(",");
        int causes = RemoteRejection.values().length;
        if (f.length != 9 + causes) {
            throw new IllegalArgumentException("a rank's remote store counters have " + (9 + causes) + " fields, got "
                    + f.length + ": " + word);
        }
        long[] n = new long[f.length];
        for (int i = 0; i < f.length; i++) {
            n[i] = Long.parseLong(f[i]);
        }
        long[] rejections = Arrays.copyOfRange(n, 9, 9 + causes);
        return new RemoteStoreStats(n[0] != 0, n[1] != 0, n[2], n[3], n[4], n[5], n[6], n[7], n[8], rejections, 0, 0, 0, 0);
    }
}
