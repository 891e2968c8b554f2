package dev.kvtier.observe;

import dev.kvtier.Backend;
import dev.kvtier.KvTierCache;
import dev.kvtier.KvTierConfig;
import dev.kvtier.store.PositionRange;
import dev.kvtier.store.Tier;

import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.Callable;

/**
 * Run by {@link MicrometerAbsentTest} inside a class loader without Micrometer (and without JUnit):
 * opens a host cache, moves a segment down and back up under a JFR recording, checks its bytes.
 */
public final class WithoutMicrometer implements Callable<String> {
    @Override
    public String call() throws Exception {
        Path disk = Files.createTempDirectory("kvtier-no-micrometer-");
        Path recordingFile = disk.resolveSibling(disk.getFileName() + ".jfr");
        byte[] bytes = new byte[4096];
        Arrays.fill(bytes, (byte) 7);
        try (var recording = KvTierFlightRecording.start(recordingFile);
             KvTierCache cache = KvTierCache.open(KvTierConfig.builder().backend(Backend.HOST).pageSizeBytes(4096)
                     .gpuBudgetBytes(8192).cpuBudgetBytes(8192).diskExtentBytes(65536).diskDirectory(disk).build())) {
            cache.put("k", PositionRange.of(0, 1), MemorySegment.ofArray(bytes), Tier.GPU);
            cache.demote("k", Tier.DISK);
            cache.ensureResident("k", Tier.CPU);
            byte[] back = new byte[bytes.length];
            cache.read("k", MemorySegment.ofArray(back));
            if (!Arrays.equals(bytes, back)) {
                throw new AssertionError("bytes changed on the way");
            }
            return "GPU->DISK->CPU: " + back.length + " bytes " + (Arrays.equals(bytes, back) ? "intact" : "changed");
        } finally {
            Files.deleteIfExists(recordingFile);
            Files.deleteIfExists(disk);
        }
    }
}
