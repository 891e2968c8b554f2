package dev.kvtier.sync;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.IntRange;

/** Property tests: the layer split, explicit assignments, and the protocol against a reference model. */
class SyncPropertiesTest {

    // ---- the layer split ----

    @Property
    void evenSplitCoversEveryLayerExactlyOnceInRankOrder(
            @ForAll @IntRange(min = 1, max = 64) int worldSize, @ForAll @IntRange(min = 0, max = 300) int numLayers) {
        List<Integer> concatenated = new ArrayList<>();
        int previousSize = Integer.MAX_VALUE;
        for (int rank = 0; rank < worldSize; rank++) {
            List<Integer> layers = new CacheShardInfo(rank, worldSize, numLayers).layers();
            concatenated.addAll(layers);
            // Sizes differ by at most one, the larger ones first.
            assertTrue(layers.size() <= previousSize, "rank " + rank + " has more layers than the rank before");
            assertTrue(layers.size() == numLayers / worldSize || layers.size() == numLayers / worldSize + 1);
            previousSize = layers.size();
        }
        List<Integer> expected = new ArrayList<>();
        for (int layer = 0; layer < numLayers; layer++) {
            expected.add(layer);
        }
        assertEquals(expected, concatenated);
    }

    @Property
    void everyLayerHasExactlyOneOwner(
            @ForAll @IntRange(min = 1, max = 16) int worldSize, @ForAll @IntRange(min = 0, max = 64) int numLayers) {
        List<CacheShardInfo> shards = new ArrayList<>();
        for (int rank = 0; rank < worldSize; rank++) {
            shards.add(new CacheShardInfo(rank, worldSize, numLayers));
        }
        for (int layer = 0; layer < numLayers; layer++) {
            int owners = 0;
            for (CacheShardInfo shard : shards) {
                boolean owns = shard.ownsLayer(layer);
                assertEquals(shard.layers().contains(layer), owns);
                owners += owns ? 1 : 0;
            }
            assertEquals(1, owners, "owners of layer " + layer);
        }
    }

    @Property
    void withLayersKeepsAnyValidAssignment(@ForAll("assignments") List<Integer> layersAndShape) {
        int numLayers = layersAndShape.getFirst();
        List<Integer> layers = layersAndShape.subList(1, layersAndShape.size());
        CacheShardInfo shard = CacheShardInfo.withLayers(0, 1, numLayers, layers);
        assertEquals(layers, shard.layers());
        for (int layer = 0; layer < numLayers; layer++) {
            assertEquals(layers.contains(layer), shard.ownsLayer(layer));
        }
    }

    /** First element: numLayers; the rest: distinct layers in [0, numLayers) in random order. */
    @Provide
    Arbitrary<List<Integer>> assignments() {
        return Arbitraries.integers().between(0, 40).flatMap(numLayers -> {
            if (numLayers == 0) {
                return Arbitraries.just(List.of(0));
            }
            return Arbitraries.integers().between(0, numLayers - 1).list().uniqueElements().ofMaxSize(numLayers)
                    .map(layers -> {
                        List<Integer> result = new ArrayList<>();
                        result.add(numLayers);
                        result.addAll(layers);
                        return result;
                    });
        });
    }

    @Property
    void withLayersRefusesARepeatedLayer(
            @ForAll @IntRange(min = 1, max = 20) int numLayers, @ForAll @IntRange(min = 0, max = 19) int repeated) {
        int layer = repeated % numLayers;
        assertThrows(IllegalArgumentException.class, () -> CacheShardInfo.withLayers(0, 1, numLayers, List.of(layer, layer)));
    }

    // ---- the protocol against a reference model ----

    /** One step of a scenario: record an event, or change the log bound. */
    sealed interface Step {}

    record Record(SyncEvent event) implements Step {}

    record SetMaxLogSize(int maxLogSize) implements Step {}

    record Scenario(int worldSize, int numLayers, int maxLogSize, List<Step> steps) {}

    /** A few ids, both signs, so confirmations repeat and the high bit is exercised. */
    private static final List<Long> PREFIX_IDS = List.of(0L, 1L, 0xABCDL, -1L, Long.MIN_VALUE);

    @Provide
    Arbitrary<Scenario> scenarios() {
        return Combinators.combine(
                        Arbitraries.integers().between(1, 4),
                        Arbitraries.integers().between(0, 4),
                        Arbitraries.integers().between(0, 6))
                .flatAs((worldSize, numLayers, maxLogSize) -> steps(worldSize, numLayers)
                        .list().ofMaxSize(60)
                        .map(steps -> new Scenario(worldSize, numLayers, maxLogSize, steps)));
    }

    /** Ranks and layers reach one past the shape so that some events must be refused. */
    private static Arbitrary<Step> steps(int worldSize, int numLayers) {
        Arbitrary<Integer> ranks = Arbitraries.integers().between(0, worldSize);
        Arbitrary<Integer> layers = Arbitraries.integers().between(0, numLayers);
        Arbitrary<Long> positions = Arbitraries.longs().between(0, 20);
        Arbitrary<Step> updated = Combinators.combine(ranks, layers, positions)
                .as((rank, layer, pos) -> new Record(new SyncEvent.ShardUpdated(rank, layer, pos)));
        Arbitrary<Step> evicted = Combinators.combine(ranks, layers, positions)
                .as((rank, layer, pos) -> new Record(new SyncEvent.ShardEvicted(rank, layer, pos)));
        Arbitrary<Step> confirmed = Combinators.combine(Arbitraries.of(PREFIX_IDS), Arbitraries.longs().between(0, 100))
                .as((id, tokens) -> new Record(new SyncEvent.PrefixConfirmed(id, tokens)));
        Arbitrary<Step> flush = Arbitraries.just(new Record(new SyncEvent.FlushAll()));
        Arbitrary<Step> bound = Arbitraries.integers().between(0, 6).map(SetMaxLogSize::new);
        return Arbitraries.frequencyOf(
                Tuple.of(10, updated), Tuple.of(4, evicted), Tuple.of(4, confirmed), Tuple.of(1, flush), Tuple.of(1, bound));
    }

    @Property(tries = 500)
    void protocolAnswersLikeTheReferenceModelAfterEveryStep(@ForAll("scenarios") Scenario scenario) {
        CacheSyncProtocol proto = new CacheSyncProtocol(scenario.worldSize(), scenario.numLayers())
                .withMaxLogSize(scenario.maxLogSize());
        ReferenceModel model = new ReferenceModel(scenario.worldSize(), scenario.numLayers(), scenario.maxLogSize());
        for (Step step : scenario.steps()) {
            switch (step) {
                case SetMaxLogSize s -> {
                    proto.withMaxLogSize(s.maxLogSize());
                    model.setMaxLogSize(s.maxLogSize());
                }
                case Record r when model.fitsShape(r.event()) -> {
                    proto.recordEvent(r.event());
                    model.record(r.event());
                }
                case Record r -> assertThrows(IllegalArgumentException.class, () -> proto.recordEvent(r.event()),
                        () -> "should refuse " + r.event());
            }
            model.assertSameAnswers(proto);
        }
    }

    /** The seed's algorithm, written as plainly as possible (hash map of pairs, list log). */
    private static final class ReferenceModel {
        private final int worldSize;
        private final int numLayers;
        private int maxLogSize;
        private final Map<List<Integer>, Long> positions = new HashMap<>();
        private final Map<Long, Long> prefixes = new HashMap<>();
        private final List<SyncEvent> log = new ArrayList<>();

        ReferenceModel(int worldSize, int numLayers, int maxLogSize) {
            this.worldSize = worldSize;
            this.numLayers = numLayers;
            this.maxLogSize = maxLogSize;
        }

        boolean fitsShape(SyncEvent event) {
            return switch (event) {
                case SyncEvent.ShardUpdated e -> e.rank() < worldSize && e.layer() < numLayers;
                case SyncEvent.ShardEvicted e -> e.rank() < worldSize && e.layer() < numLayers;
                default -> true;
            };
        }

        void record(SyncEvent event) {
            switch (event) {
                case SyncEvent.ShardUpdated e -> positions.put(List.of(e.rank(), e.layer()), e.seqPos());
                case SyncEvent.ShardEvicted e -> positions.put(List.of(e.rank(), e.layer()), e.seqPos());
                case SyncEvent.PrefixConfirmed e -> prefixes.put(e.prefixId(), e.numTokens());
                case SyncEvent.FlushAll _ -> {
                    positions.clear();
                    prefixes.clear();
                }
            }
            log.add(event);
            trim();
        }

        void setMaxLogSize(int max) {
            maxLogSize = max;
            trim(); // kvtier trims at once (the seed waited for the next event)
        }

        private void trim() {
            if (log.size() > maxLogSize) {
                log.subList(0, log.size() - maxLogSize).clear();
            }
        }

        private OptionalLong position(int rank, int layer) {
            Long value = positions.get(List.of(rank, layer));
            return value == null ? OptionalLong.empty() : OptionalLong.of(value);
        }

        private OptionalLong minSynced(int layer) {
            long min = Long.MAX_VALUE;
            for (int rank = 0; rank < worldSize; rank++) {
                OptionalLong p = position(rank, layer);
                if (p.isEmpty()) {
                    return OptionalLong.empty();
                }
                min = Math.min(min, p.getAsLong());
            }
            return OptionalLong.of(min);
        }

        void assertSameAnswers(CacheSyncProtocol proto) {
            for (int layer = 0; layer < numLayers; layer++) {
                assertEquals(minSynced(layer), proto.minSyncedPosition(layer), "minSyncedPosition(" + layer + ")");
                for (int rank = 0; rank < worldSize; rank++) {
                    assertEquals(position(rank, layer), proto.latestPosition(rank, layer),
                            "latestPosition(" + rank + ", " + layer + ")");
                }
            }
            for (long id : PREFIX_IDS) {
                assertEquals(prefixes.containsKey(id), proto.isPrefixConfirmed(id), "isPrefixConfirmed(" + id + ")");
                Long tokens = prefixes.get(id);
                assertEquals(tokens == null ? OptionalLong.empty() : OptionalLong.of(tokens), proto.prefixTokens(id));
            }
            assertEquals(log.size(), proto.eventCount());
            for (int n = 0; n <= log.size() + 1; n++) {
                assertEquals(log.subList(Math.max(0, log.size() - n), log.size()), proto.recentEvents(n),
                        "recentEvents(" + n + ")");
            }
        }
    }
}
