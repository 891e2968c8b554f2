package dev.kvtier.prefix;

import dev.kvtier.Backend;
import dev.kvtier.KvTierCache;
import dev.kvtier.KvTierConfig;
import dev.kvtier.SegmentPinnedException;
import dev.kvtier.TierFullException;
import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.SegmentMeta;
import dev.kvtier.store.Tier;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The prefix-eviction invariant under random block forests, budgets, policies and operations, checked after
 * every step on the host backend:
 * <ol>
 *   <li>no block is lost: every block stored and not removed is cached (DISK is unbounded);</li>
 *   <li>no orphan: the parent of every cached block is cached;</li>
 *   <li>tail first: no cached block is on a faster tier than its parent;</li>
 *   <li>bytes: a block read back (one per step) holds what was stored.</li>
 * </ol>
 * Operations: store a run of new blocks under a random cached block (or a new chain), on a random tier;
 * restore a random block's prefix to GPU, keeping the pin open for the next step at times (pins make victims
 * scarce);
 * demote a random block through the segment API (refused for a parent whose child is on its tier or
 * faster); remove a random block (refused while it has children). Budgets are a few blocks, so nearly every
 * step makes room; with and without room made in batches ({@code KvTierConfig.Builder#roomBatchFraction}).
 */
class PrefixEvictionPropertyTest {
    private static final int PAGE = 4096;
    private static final BlockLayout LAYOUT = BlockLayout.of(16, PAGE);

    /** One operation; its numbers pick what it acts on among what exists when it runs. */
    record Op(int kind, int pick, int count, int tier) { }

    @Property(tries = 50, edgeCases = EdgeCasesMode.NONE)
    void chainsLeaveTiersFromTheTailAndNoBlockOutlivesItsParent(
            @ForAll("operations") List<Op> ops,
            @ForAll @IntRange(min = 1, max = 6) int gpuBlocks,
            @ForAll @IntRange(min = 1, max = 8) int cpuBlocks,
            @ForAll("policies") String policy,
            @ForAll("batchFractions") double roomBatch) {
        Path directory;
        try {
            directory = Files.createTempDirectory("kvtier-prefix-property-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        KvTierConfig config = KvTierConfig.builder().backend(Backend.HOST).pageSizeBytes(PAGE)
                .gpuBudgetBytes((long) gpuBlocks * PAGE).cpuBudgetBytes((long) cpuBlocks * PAGE)
                .diskExtentBytes(16L * PAGE).diskDirectory(directory).policy(DemotionPolicy.named(policy))
                .roomBatchFraction(roomBatch).build();
        try (KvTierCache cache = KvTierCache.open(config)) {
            new Run(cache, cache.prefixBlocks(LAYOUT)).play(ops);
        } finally {
            deleteTree(directory);
        }
    }

    private static void deleteTree(Path directory) {
        try (Stream<Path> files = Files.walk(directory)) {
            for (Path path : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Provide
    Arbitrary<List<Op>> operations() {
        Arbitrary<Op> op = Combinators.combine(
                Arbitraries.integers().between(0, 9),
                Arbitraries.integers().between(0, 1_000),
                Arbitraries.integers().between(1, 4),
                Arbitraries.integers().between(0, 2)).as(Op::new);
        return op.list().ofMinSize(1).ofMaxSize(40);
    }

    /** None, and batches of a quarter and a half of each tier (one to four blocks at these budgets). */
    @Provide
    Arbitrary<Double> batchFractions() {
        return Arbitraries.of(0.0, 0.25, 0.5);
    }

    @Provide
    Arbitrary<String> policies() {
        return Arbitraries.of("least-recently-used", "least-accessed-first", "s3-fifo", "w-tinylfu");
    }

    /** One history against one cache, with the model of what must be cached. */
    private static final class Run {
        private final KvTierCache cache;
        private final PrefixBlockCache blocks;
        /** Every block stored and not removed, in storing order, with its parent (null: a chain's first). */
        private final Map<BlockHash, BlockHash> parentOf = new LinkedHashMap<>();
        private final Map<BlockHash, Integer> children = new HashMap<>();
        private final List<PrefixPin> open = new ArrayList<>();
        private final List<Integer> openUntil = new ArrayList<>();
        private long nextHash = 1;
        private int step;

        Run(KvTierCache cache, PrefixBlockCache blocks) {
            this.cache = cache;
            this.blocks = blocks;
        }

        void play(List<Op> ops) {
            try {
                for (Op op : ops) {
                    apply(op);
                    step++;
                    closeExpiredPins();
                    check(op);
                }
            } finally {
                open.forEach(PrefixPin::close);
            }
        }

        private void apply(Op op) {
            List<BlockHash> known = new ArrayList<>(parentOf.keySet());
            BlockHash picked = known.isEmpty() ? null : known.get(op.pick() % known.size());
            Tier tier = Tier.values()[op.tier()];
            switch (op.kind()) {
                case 0, 1, 2, 3 -> store(op.kind() == 0 || picked == null ? null : picked, op.count(), tier);
                case 4, 5, 6 -> {
                    if (picked != null) {
                        restore(picked, op.count() / 3); // held 0 or 1 steps: a GPU full of pins only backs off
                    }
                }
                case 7, 8 -> {
                    if (picked != null && tier != Tier.GPU) {
                        demote(picked, tier);
                    }
                }
                default -> {
                    if (picked != null) {
                        remove(picked);
                    }
                }
            }
        }

        private void store(BlockHash parent, int count, Tier tier) {
            List<BlockHash> hashes = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                hashes.add(new BlockHash(0x5eed, nextHash++));
            }
            try {
                blocks.storeBlocks(parent == null ? BlockHash.ROOT : parent, hashes, contents(hashes), tier);
            } catch (TierFullException e) {
                // Every block on the tier pinned: the blocks before the one refused were stored.
            }
            BlockHash previous = parent;
            for (BlockHash hash : hashes) {
                if (blocks.lookupPrefix(List.of(hash)).cachedBlocks() == 0) {
                    break;
                }
                parentOf.put(hash, previous);
                if (previous != null) {
                    children.merge(previous, 1, Integer::sum);
                }
                previous = hash;
            }
        }

        private void restore(BlockHash last, int holdSteps) {
            List<BlockHash> prefix = prefixOf(last);
            try {
                PrefixPin pin = blocks.ensurePrefixResident(prefix, Tier.GPU);
                assertEquals(prefix.size(), pin.size(), "every block of the prefix is cached: all are pinned");
                for (ResidentBlock block : pin.blocks()) {
                    assertEquals(Tier.GPU, block.tier());
                }
                open.add(pin);
                openUntil.add(step + holdSteps);
            } catch (TierFullException e) {
                // Larger than the GPU, or the GPU held by pins: nothing moved (checked below).
            }
        }

        private void demote(BlockHash hash, Tier to) {
            String key = PrefixBlockCache.keyOf(hash);
            Tier now = cache.get(key).orElseThrow().tier();
            if (!to.isFasterThan(now) && now != to) {
                try {
                    cache.demote(key, to);
                } catch (IllegalStateException | SegmentPinnedException | TierFullException refused) {
                    // A parent of a child on its tier or faster, a pinned block, or a full CPU: refused.
                }
            }
        }

        private void remove(BlockHash hash) {
            if (children.getOrDefault(hash, 0) > 0) {
                try {
                    blocks.removeBlock(hash);
                    fail("a block with " + children.get(hash) + " cached children was removed");
                } catch (IllegalStateException expected) {
                    return;
                }
            }
            assertTrue(blocks.removeBlock(hash));
            BlockHash parent = parentOf.remove(hash);
            if (parent != null) {
                children.merge(parent, -1, Integer::sum);
            }
        }

        private void closeExpiredPins() {
            for (int i = open.size() - 1; i >= 0; i--) {
                if (openUntil.get(i) <= step) {
                    open.remove(i).close();
                    openUntil.remove(i);
                }
            }
        }

        private List<BlockHash> prefixOf(BlockHash last) {
            List<BlockHash> prefix = new ArrayList<>();
            for (BlockHash h = last; h != null; h = parentOf.get(h)) {
                prefix.add(0, h);
            }
            return prefix;
        }

        private void check(Op op) {
            for (Map.Entry<BlockHash, BlockHash> entry : parentOf.entrySet()) {
                Optional<SegmentMeta> child = cache.get(PrefixBlockCache.keyOf(entry.getKey()));
                assertTrue(child.isPresent(), "step " + step + " (" + op + "): block " + entry.getKey() + " was lost");
                if (entry.getValue() == null) {
                    continue;
                }
                Optional<SegmentMeta> parent = cache.get(PrefixBlockCache.keyOf(entry.getValue()));
                assertTrue(parent.isPresent(), "step " + step + " (" + op + "): block " + entry.getKey()
                        + " is cached without its parent " + entry.getValue());
                assertTrue(!child.get().tier().isFasterThan(parent.get().tier()), "step " + step + " (" + op + "): block "
                        + entry.getKey() + " is on " + child.get().tier() + ", its parent " + entry.getValue() + " on "
                        + parent.get().tier());
            }
            if (!parentOf.isEmpty()) {
                List<BlockHash> known = new ArrayList<>(parentOf.keySet());
                BlockHash sample = known.get(Math.floorMod(op.pick() * 31 + step, known.size()));
                byte[] back = new byte[PAGE];
                blocks.readBlock(sample, MemorySegment.ofArray(back));
                assertArrayEquals(content(sample), back, "step " + step + ": the bytes of " + sample);
            }
        }
    }

    static byte[] content(BlockHash hash) {
        byte[] bytes = new byte[PAGE];
        new SplittableRandom(hash.low()).nextBytes(bytes);
        return bytes;
    }

    static MemorySegment contents(List<BlockHash> hashes) {
        byte[] all = new byte[hashes.size() * PAGE];
        for (int i = 0; i < hashes.size(); i++) {
            System.arraycopy(content(hashes.get(i)), 0, all, i * PAGE, PAGE);
        }
        return MemorySegment.ofArray(all);
    }
}
