package dev.kvtier.bench.sim;

import dev.kvtier.ByteSizes;
import java.util.Locale;

/**
 * A tier budget on the command line: either an absolute size ({@code 64MiB}) or a share of the
 * workload's peak working set ({@code 25%}), resolved once the workload is known. Immutable.
 */
public sealed interface Budget {

    /** The budget in bytes for a workload whose peak live bytes are {@code peakWorkingSetBytes}. */
    long resolve(long peakWorkingSetBytes);

    /** As written on the command line. */
    String spec();

    /** An absolute size. */
    record Bytes(long bytes) implements Budget {
        public Bytes {
            if (bytes <= 0) {
                throw new IllegalArgumentException("budget must be positive, got " + bytes + " bytes");
            }
        }

        @Override public long resolve(long peakWorkingSetBytes) { return bytes; }
        @Override public String spec() { return ByteSizes.format(bytes); }
    }

    /** A share of the peak working set, {@code 0 < fraction}; at least one byte. */
    record ShareOfWorkingSet(double fraction) implements Budget {
        public ShareOfWorkingSet {
            if (!(fraction > 0 && fraction <= 100)) {
                throw new IllegalArgumentException("share must be in (0%, 10000%], got " + fraction * 100 + "%");
            }
        }

        @Override
        public long resolve(long peakWorkingSetBytes) {
            return Math.max(1, (long) Math.ceil(peakWorkingSetBytes * fraction));
        }

        @Override
        public String spec() {
            return String.format(Locale.ROOT, "%.4g%%", fraction * 100).replaceAll("\\.?0+%$", "%");
        }
    }

    /** Parses {@code 25%} or a size, both by {@link ByteSizes}. */
    static Budget parse(String text) {
        if (ByteSizes.isShare(text)) {
            try {
                return new ShareOfWorkingSet(ByteSizes.parseShare(text));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("expected a percentage like 25% or a size like 64MiB");
            }
        }
        return new Bytes(ByteSizes.parse(text));
    }
}
