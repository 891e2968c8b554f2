package dev.kvtier;

import dev.kvtier.store.DemotionPolicy;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The child JVM of {@link Issue9RegressionTest#aFailedOpenLeavesNoDirectoryAndNoThread}, run with
 * its own {@code java.io.tmpdir} so that other processes' temporary directories cannot disturb the
 * count: makes {@code open} fail twice (CUDA asked for but not loadable; a policy whose order is
 * null), then prints what is left: {@code LEFT <directories> <threads>} (kvtier-disk-* directories
 * in the temporary directory, live threads named kvtier-*). Not a test itself.
 */
public final class FailedOpenChild {
    private FailedOpenChild() {
    }

    /** @param args a file that is not a library, to pass as the libcudart */
    public static void main(String[] args) throws Exception {
        int page = 4096;
        try {
            KvTierCache.open(KvTierConfig.builder().gpuBudgetBytes(16L * page).cpuBudgetBytes(16L * page)
                    .backend(Backend.CUDA).cudaLibrary(Path.of(args[0])).build()).close();
            System.out.println("FAIL: open with an unloadable libcudart succeeded");
        } catch (CacheOpenException expected) {
            System.out.println("open 1 failed as expected: " + expected.getMessage());
        }
        DemotionPolicy nullOrder = new DemotionPolicy() {
            @Override
            public String name() {
                return "null order";
            }

            @Override
            public Comparator<Usage> demotionOrder() {
                return null;
            }
        };
        try {
            KvTierCache.open(KvTierConfig.builder().gpuBudgetBytes(16L * page).cpuBudgetBytes(16L * page)
                    .backend(Backend.HOST).copyThreads(2).policy(nullOrder).build()).close();
            System.out.println("FAIL: open with a null policy order succeeded");
        } catch (RuntimeException expected) {
            System.out.println("open 2 failed as expected: " + expected);
        }
        long deadline = System.nanoTime() + 5_000_000_000L; // threads told to stop get a moment to end
        long threads;
        while ((threads = kvtierThreads()) > 0 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        System.out.println("LEFT " + temporaryDiskDirectories().size() + " " + threads + " " + temporaryDiskDirectories());
    }

    private static List<Path> temporaryDiskDirectories() throws IOException {
        List<Path> found = new ArrayList<>();
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(Path.of(System.getProperty("java.io.tmpdir")), "kvtier-disk-*")) {
            dirs.forEach(found::add);
        }
        return found;
    }

    private static long kvtierThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("kvtier-")).count();
    }
}
