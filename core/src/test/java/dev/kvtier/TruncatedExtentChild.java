package dev.kvtier;

import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.MemorySegment;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The child JVM of {@link Issue9RegressionTest#aTruncatedExtentFileIsAnExceptionNotASigbus}: puts a
 * segment on DISK, truncates every extent file behind the cache's back, then reads the segment and
 * makes it resident on GPU. Prints one line per step; exits 0 only when both calls threw a
 * {@link KvTierException}. A SIGBUS in the JVM instead ends it with an hs_err report (exit status
 * 134, or 1 with core dumps off as the parent runs it), which the parent reports. Not a test itself
 * (no {@code Test} in the name).
 */
public final class TruncatedExtentChild {
    private TruncatedExtentChild() {
    }

    /**
     * @param args the disk directory to use (empty, made if missing), then optionally a libcudart to
     *             run the CUDA backend over (the fake), else the host backend; or {@code zeros}: the
     *             host backend with a segment of zeros (whose checksum still matches once the file's
     *             pages read as zeros, so the copy after the check must fail safely)
     */
    public static void main(String[] args) throws IOException {
        Path directory = Path.of(args[0]);
        int page = 4096;
        KvTierConfig.Builder builder = KvTierConfig.builder().backend(Backend.HOST)
                .gpuBudgetBytes(16L * page).cpuBudgetBytes(16L * page).pageSizeBytes(page)
                .diskExtentBytes(16L * page).diskDirectory(directory);
        boolean zeros = args.length > 1 && args[1].equals("zeros");
        if (args.length > 1 && !zeros) {
            builder.backend(Backend.CUDA).cudaLibrary(Path.of(args[1]));
        }
        KvTierConfig config = builder.build();
        int failures = 0;
        try (KvTierCache cache = KvTierCache.open(config)) {
            byte[] data = new byte[5 * page + 17];
            for (int i = 0; !zeros && i < data.length; i++) {
                data[i] = (byte) (i * 31 + 7);
            }
            cache.put("victim", PositionRange.of(0, 5), MemorySegment.ofArray(data), Tier.DISK);
            int truncated = 0;
            try (DirectoryStream<Path> extents = Files.newDirectoryStream(directory, "*.extent")) {
                for (Path extent : extents) {
                    try (RandomAccessFile file = new RandomAccessFile(extent.toFile(), "rw")) {
                        file.setLength(0);
                        truncated++;
                    }
                }
            }
            System.out.println("truncated " + truncated + " extent file(s)");
            if (truncated == 0) {
                System.out.println("FAIL: no extent file to truncate in " + directory);
                System.exit(3);
            }
            failures += expectKvTierException("read", () -> cache.read("victim", MemorySegment.ofArray(new byte[data.length])));
            failures += expectKvTierException("ensureResident(GPU)", () -> cache.ensureResident("victim", Tier.GPU));
        }
        System.out.println(failures == 0 ? "OK" : "FAIL");
        System.exit(failures == 0 ? 0 : 2);
    }

    private static int expectKvTierException(String what, Runnable call) {
        try {
            call.run();
            System.out.println(what + ": FAIL, no exception");
            return 1;
        } catch (KvTierException e) {
            System.out.println(what + ": " + e.getClass().getSimpleName() + ": " + e.getMessage());
            return 0;
        } catch (RuntimeException | Error e) {
            System.out.println(what + ": FAIL, not a KvTierException: " + e);
            e.printStackTrace(System.out);
            return 1;
        }
    }
}
