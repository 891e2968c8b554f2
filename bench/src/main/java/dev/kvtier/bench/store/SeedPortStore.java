package dev.kvtier.bench.store;

import dev.kvtier.store.Tier;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The baseline: a line-by-line Java port of the Rust seed's {@code TieredStore} (tiered_storage.rs),
 * kept naive on purpose. A {@link HashMap} of mutable records; {@link #candidatesForDemotion}
 * filters the whole map and sorts the tier on every call, exactly like the seed. Like the seed
 * (which takes {@code &mut self}) it is not thread-safe and takes no lock. Benchmarks only.
 */
final class SeedPortStore {

    /** The seed's {@code SegmentMeta}: public mutable fields. */
    static final class Meta {
        final String key;
        final long start;
        final long end;
        final long sizeBytes;
        Tier tier = Tier.GPU;
        long accessCount;

        Meta(String key, long start, long end, long sizeBytes) {
            this.key = key;
            this.start = start;
            this.end = end;
            this.sizeBytes = sizeBytes;
        }
    }

    /** The seed's {@code TierTransfer}. */
    record Transfer(String key, Tier from, Tier to, long sizeBytes, long start, long end) {}

    private final long gpuBudget;
    private final long cpuBudget;
    private long gpuUsed;
    private long cpuUsed;
    private long diskUsed;
    private final Map<String, Meta> segments = new HashMap<>();

    SeedPortStore(long gpuBudget, long cpuBudget) {
        this.gpuBudget = gpuBudget;
        this.cpuBudget = cpuBudget;
    }

    boolean register(Meta meta, Tier tier) {
        if (segments.containsKey(meta.key)) {
            return false;
        }
        if (!hasBudget(tier, meta.sizeBytes)) {
            return false;
        }
        meta.tier = tier;
        addUsage(tier, meta.sizeBytes);
        segments.put(meta.key, meta);
        return true;
    }

    Transfer demote(String key, Tier to) {
        Meta seg = segments.get(key);
        if (seg == null) {
            return null;
        }
        Tier from = seg.tier;
        if (to.isFasterThan(from) || to == from) {
            return null;
        }
        if (!hasBudget(to, seg.sizeBytes)) {
            return null;
        }
        Transfer transfer = new Transfer(key, from, to, seg.sizeBytes, seg.start, seg.end);
        subUsage(from, seg.sizeBytes);
        addUsage(to, seg.sizeBytes);
        seg.tier = to;
        return transfer;
    }

    Transfer promote(String key, Tier to) {
        Meta seg = segments.get(key);
        if (seg == null) {
            return null;
        }
        Tier from = seg.tier;
        if (from.isFasterThan(to) || from == to) {
            return null;
        }
        if (!hasBudget(to, seg.sizeBytes)) {
            return null;
        }
        Transfer transfer = new Transfer(key, from, to, seg.sizeBytes, seg.start, seg.end);
        subUsage(from, seg.sizeBytes);
        addUsage(to, seg.sizeBytes);
        seg.tier = to;
        seg.accessCount++;
        return transfer;
    }

    Meta remove(String key) {
        Meta seg = segments.remove(key);
        if (seg != null) {
            subUsage(seg.tier, seg.sizeBytes);
        }
        return seg;
    }

    Meta get(String key) {
        return segments.get(key);
    }

    List<String> candidatesForDemotion(Tier tier, long needed) {
        List<Meta> onTier = new ArrayList<>();
        for (Meta s : segments.values()) {
            if (s.tier == tier) {
                onTier.add(s);
            }
        }
        onTier.sort(Comparator.comparingLong(s -> s.accessCount));
        long freed = 0;
        List<String> keys = new ArrayList<>();
        for (Meta seg : onTier) {
            if (freed >= needed) {
                break;
            }
            keys.add(seg.key);
            freed += seg.sizeBytes;
        }
        return keys;
    }

    boolean touch(String key) {
        Meta seg = segments.get(key);
        if (seg == null) {
            return false;
        }
        seg.accessCount++;
        return true;
    }

    private boolean hasBudget(Tier tier, long bytes) {
        return switch (tier) {
            case GPU -> gpuUsed + bytes <= gpuBudget;
            case CPU -> cpuUsed + bytes <= cpuBudget;
            case DISK -> true;
        };
    }

    private void addUsage(Tier tier, long bytes) {
        switch (tier) {
            case GPU -> gpuUsed += bytes;
            case CPU -> cpuUsed += bytes;
            case DISK -> diskUsed += bytes;
        }
    }

    private void subUsage(Tier tier, long bytes) {
        switch (tier) {
            case GPU -> gpuUsed = Math.max(0, gpuUsed - bytes);
            case CPU -> cpuUsed = Math.max(0, cpuUsed - bytes);
            case DISK -> diskUsed = Math.max(0, diskUsed - bytes);
        }
    }
}
