package dev.kvtier.store.policy;

import dev.kvtier.store.DemotionPolicy;
import dev.kvtier.store.Tier;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.TreeSet;

/**
 * {@link S3FifoPolicy#ADAPTIVE} with a second expert on the GPU tier: least accessed first (the seed's order, the
 * store's access counts kept across tiers, least recently used first among equal counts). Miniature simulations
 * (Waldspurger et al., ATC 2017) of the GPU tier's sampled references compare an S3-FIFO cache with an LFU cache of the
 * tier's budget times the sample rate; while the LFU simulation's recent hits exceed the S3-FIFO simulation's, the GPU
 * tier names its candidates least accessed first, otherwise as the adaptive S3-FIFO does. Why plain S3-FIFO as the other
 * simulation rather than the adaptive S3-FIFO itself: the question the chooser asks is whether frequency beats recency
 * on this traffic (document QA: popular documents read again and again), and plain S3-FIFO answers it cheaply (on the
 * tuning traces, comparing with plain S3-FIFO chose better than comparing with LRU: LRU's hits understate the adaptive
 * S3-FIFO's where frequency does not win). Both experts see every event, so the tier switches between them at once.
 *
 * <p>Costs: every event of the adaptive S3-FIFO, plus on the GPU tier an O(1) move in a list of frequency buckets per
 * use (an arrival whose access count no GPU segment has walks the b buckets below it: O(b)), plus for a sampled
 * reference a few hash lookups and queue moves in the S3-FIFO simulation and O(log s) in the LFU simulation's order
 * of its s &le; {@value #MAX_SIMULATED} keys. Every use of a GPU segment takes the store's lock (the frequency
 * buckets see every such use); uses on the other tiers are the adaptive S3-FIFO's, without the lock.
 * Not thread-safe: the tracker is used under its store's lock.
 */
public final class FrequencyExpertPolicy implements DemotionPolicy {
    /** The one instance: the policy is stateless, its trackers are not. */
    public static final FrequencyExpertPolicy INSTANCE = new FrequencyExpertPolicy("adaptive-s3-fifo-lfu", false);

    /**
     * How much more (relative) the LFU simulation must hit than the S3-FIFO one before the tier names least accessed
     * first. Zero: on the tuning traces' tables (bench/results/policy-tuning.md) any margin above it lost cells where
     * LFU was the best classic policy by a few percent, and where the two are that close either expert is near the best.
     */
    static final double MARGIN = 0.0;
    /** Keys a simulation may hold before the sample rate halves: bounds memory and the cost of a sampled reference. */
    static final int MAX_SIMULATED = 256;
    /** Sampled references before the tier may leave the adaptive S3-FIFO: the simulations' first hits are noise. */
    static final int MIN_EVIDENCE = 256;
    /** Each simulation's hits decay by 1 / this per sampled reference (an exponential window). */
    static final int WINDOW = 8192;
    private static final int FULL = 1 << 16;

    private final String name;
    /** Whether the GPU tier always names least accessed first (tests of that naming). */
    private final boolean pinned;

    private FrequencyExpertPolicy(String name, boolean pinned) {
        this.name = name;
        this.pinned = pinned;
    }

    /**
     * The policy with its GPU tier always naming least accessed first, whatever its simulations say: for tests of that
     * naming, which the policy reaches only on traffic that favours it.
     */
    static FrequencyExpertPolicy pinnedLeastAccessedFirst() {
        return new FrequencyExpertPolicy("adaptive-s3-fifo-lfu-pinned", true);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Tracker newTracker(long gpuBudget, long cpuBudget) {
        Tracker inner = S3FifoPolicy.ADAPTIVE.newTracker(gpuBudget, cpuBudget);
        return gpuBudget <= 0 ? inner : new ExpertTracker(inner, gpuBudget, pinned);
    }

    @Override
    public String toString() {
        return name();
    }

    /** A GPU segment's place in the least-accessed-first order (kept in the segment's policy slot). */
    private static final class FrequencyNode {
        final Segment segment;
        Bucket bucket;
        FrequencyNode previous;
        FrequencyNode next;
        boolean held;

        FrequencyNode(Segment segment) {
            this.segment = segment;
        }
    }

    /** The GPU segments with one access count, least recently used first. */
    private static final class Bucket {
        final long count;
        FrequencyNode first;
        FrequencyNode last;
        Bucket lower;
        Bucket higher;

        Bucket(long count) {
            this.count = count;
        }
    }

    /** One simulated key. */
    private static final class Simulated {
        final String key;
        final long size;
        /** The LFU simulation: the key's access count at its last reference; the S3-FIFO one: its use counter. */
        long count;
        long stamp;

        Simulated(String key, long size) {
            this.key = key;
            this.size = size;
        }
    }

    /**
     * One store's tracker: the adaptive S3-FIFO's, told every event, with the GPU tier's frequency order and the two
     * simulations beside it; the GPU tier names by whichever expert the simulations currently favour.
     */
    static final class ExpertTracker implements Tracker {
        private final Tracker inner;
        private final long gpuBudget;
        /** Buckets by count; {@link #lowest} starts the linked order. */
        private final HashMap<Long, Bucket> buckets = new HashMap<>();
        private Bucket lowest;

        /** A key is sampled while its 16-bit sample value is below this. */
        private int threshold = FULL;
        /** The S3-FIFO simulation: its small and main queues (insertion order) and its ghost keys. */
        private final LinkedHashMap<String, Simulated> small = new LinkedHashMap<>();
        private final LinkedHashMap<String, Simulated> main = new LinkedHashMap<>();
        private final LinkedHashMap<String, Boolean> ghosts = new LinkedHashMap<>();
        private long smallBytes;
        private long mainBytes;
        private final HashMap<String, Simulated> lfuKeys = new HashMap<>();
        private final TreeSet<Simulated> lfuSimulation = new TreeSet<>((a, b) -> a.count != b.count
                ? Long.compare(a.count, b.count) : Long.compare(a.stamp, b.stamp));
        private long lfuBytes;
        private long clock;
        private double s3FifoHits;
        private double lfuHits;
        private long sampled;
        private final boolean pinned;
        private boolean leastAccessedFirst;

        ExpertTracker(Tracker inner, long gpuBudget, boolean pinned) {
            this.inner = inner;
            this.gpuBudget = gpuBudget;
            this.pinned = pinned;
            this.leastAccessedFirst = pinned;
        }

        @Override
        public void registered(Segment segment, Tier tier) {
            inner.registered(segment, tier);
            if (tier == Tier.GPU) {
                insert(segment);
                reference(segment);
            }
        }

        @Override
        public void used(Segment segment, Tier tier) {
            inner.used(segment, tier);
            if (tier == Tier.GPU) {
                raise((FrequencyNode) segment.policyNode());
                reference(segment);
            }
        }

        /** As the adaptive S3-FIFO's: uses off the GPU tier may then come without the lock. */
        @Override
        public boolean takesConcurrentUses() {
            return inner.takesConcurrentUses();
        }

        /** A GPU use moves the segment between frequency buckets, which needs the lock; others go to the S3-FIFO. */
        @Override
        public boolean usedConcurrently(Segment segment, Tier tier) {
            return tier != Tier.GPU && inner.usedConcurrently(segment, tier);
        }

        @Override
        public void demoted(Segment segment, Tier from, Tier to) {
            inner.demoted(segment, from, to);
            if (from == Tier.GPU) {
                unlink((FrequencyNode) segment.policyNode());
                segment.policyNode(null);
            }
        }

        @Override
        public void promoted(Segment segment, Tier from, Tier to) {
            inner.promoted(segment, from, to);
            if (to == Tier.GPU) {
                insert(segment);
                reference(segment);
            }
        }

        @Override
        public void rolledBack(Segment segment, Tier from, Tier to) {
            inner.rolledBack(segment, from, to);
            if (from == Tier.GPU) {
                unlink((FrequencyNode) segment.policyNode());
                segment.policyNode(null);
            }
            if (to == Tier.GPU) {
                insert(segment);
            }
        }

        @Override
        public void removed(Segment segment, Tier tier) {
            inner.removed(segment, tier);
            if (tier == Tier.GPU) {
                unlink((FrequencyNode) segment.policyNode());
                segment.policyNode(null);
            }
            if (isSampled(segment)) {
                Simulated inSmall = small.remove(segment.key());
                if (inSmall != null) {
                    smallBytes -= inSmall.size;
                }
                Simulated inMain = main.remove(segment.key());
                if (inMain != null) {
                    mainBytes -= inMain.size;
                }
                ghosts.remove(segment.key());
                Simulated simulated = lfuKeys.remove(segment.key());
                if (simulated != null) {
                    lfuSimulation.remove(simulated);
                    lfuBytes -= simulated.size;
                }
            }
        }

        @Override
        public void held(Segment segment, Tier tier) {
            inner.held(segment, tier);
            if (tier == Tier.GPU) {
                ((FrequencyNode) segment.policyNode()).held = true;
            }
        }

        @Override
        public void released(Segment segment, Tier tier) {
            inner.released(segment, tier);
            if (tier == Tier.GPU) {
                ((FrequencyNode) segment.policyNode()).held = false;
            }
        }

        @Override
        public void collectCandidates(Tier tier, long needed, List<String> keys) {
            if (tier != Tier.GPU || !leastAccessedFirst) {
                inner.collectCandidates(tier, needed, keys);
                return;
            }
            // Held segments keep their rank but are named only if the others do not add up to what is asked.
            long named = 0;
            List<Segment> held = null;
            for (Bucket b = lowest; b != null && named < needed; b = b.higher) {
                for (FrequencyNode n = b.first; n != null && named < needed; n = n.next) {
                    if (n.held) {
                        if (held == null) {
                            held = new ArrayList<>();
                        }
                        held.add(n.segment);
                    } else {
                        CandidateList.add(keys, PolicyNode.of(n.segment));
                        named += n.segment.sizeBytes();
                    }
                }
            }
            if (held != null) {
                for (int i = 0; i < held.size() && named < needed; i++) {
                    CandidateList.add(keys, PolicyNode.of(held.get(i)));
                    named += held.get(i).sizeBytes();
                }
            }
        }

        private void insert(Segment segment) {
            FrequencyNode node = new FrequencyNode(segment);
            segment.policyNode(node);
            append(bucketFor(segment.accessCount()), node);
        }

        /** A use raised the segment's access count: it moves to the end of its new count's bucket. */
        private void raise(FrequencyNode node) {
            Bucket from = node.bucket;
            long count = node.segment.accessCount();
            if (count == from.count) {
                detach(node);
                append(from, node);
                return;
            }
            Bucket to = from.higher != null && from.higher.count == count ? from.higher
                    : count > from.count && (from.higher == null || from.higher.count > count) ? link(from, count)
                    : null;
            remove(node);
            append(to != null ? to : bucketFor(count), node);
        }

        /**
         * The bucket for {@code count}, made (and linked in order) if there is none: then found by a walk up from the
         * lowest bucket. Why a walk rather than a sorted map: only arrivals whose count no GPU segment has walk (a
         * touch links its new bucket next to the old one), and a sorted map's update on every bucket made or emptied
         * cost more per touch than the walks on the traces measured.
         */
        private Bucket bucketFor(long count) {
            Bucket bucket = buckets.get(count);
            if (bucket != null) {
                return bucket;
            }
            if (lowest != null && lowest.count < count) {
                Bucket below = lowest;
                while (below.higher != null && below.higher.count < count) {
                    below = below.higher;
                }
                return link(below, count);
            }
            bucket = new Bucket(count);
            bucket.higher = lowest;
            if (lowest != null) {
                lowest.lower = bucket;
            }
            lowest = bucket;
            buckets.put(count, bucket);
            return bucket;
        }

        /** A new bucket for {@code count} right above {@code below}. */
        private Bucket link(Bucket below, long count) {
            Bucket bucket = new Bucket(count);
            bucket.lower = below;
            bucket.higher = below.higher;
            if (below.higher != null) {
                below.higher.lower = bucket;
            }
            below.higher = bucket;
            buckets.put(count, bucket);
            return bucket;
        }

        private static void append(Bucket bucket, FrequencyNode node) {
            node.bucket = bucket;
            node.previous = bucket.last;
            node.next = null;
            if (bucket.last == null) {
                bucket.first = node;
            } else {
                bucket.last.next = node;
            }
            bucket.last = node;
        }

        /** Takes {@code node} out of its bucket, dropping the bucket if it empties. */
        private void remove(FrequencyNode node) {
            Bucket bucket = node.bucket;
            detach(node);
            if (bucket.first == null) {
                if (bucket.lower == null) {
                    lowest = bucket.higher;
                } else {
                    bucket.lower.higher = bucket.higher;
                }
                if (bucket.higher != null) {
                    bucket.higher.lower = bucket.lower;
                }
                buckets.remove(bucket.count);
            }
        }

        /** Takes {@code node} out of its bucket's list, leaving the bucket linked even if it empties. */
        private static void detach(FrequencyNode node) {
            Bucket bucket = node.bucket;
            if (node.previous == null) {
                bucket.first = node.next;
            } else {
                node.previous.next = node.next;
            }
            if (node.next == null) {
                bucket.last = node.previous;
            } else {
                node.next.previous = node.previous;
            }
            node.previous = null;
            node.next = null;
            node.bucket = null;
        }

        private void unlink(FrequencyNode node) {
            if (node != null && node.bucket != null) {
                remove(node);
            }
        }

        private boolean isSampled(Segment segment) {
            return ((PolicyNode.of(segment).hash * 0x9E3779B9) >>> 16) < threshold;
        }

        /** A reference onto the GPU tier: each simulation plays it if the key is sampled. */
        private void reference(Segment segment) {
            if (!isSampled(segment)) {
                return;
            }
            long budget = (long) ((double) gpuBudget * threshold / FULL);
            String key = segment.key();
            long size = segment.sizeBytes();
            s3FifoHits *= 1 - 1.0 / WINDOW;
            lfuHits *= 1 - 1.0 / WINDOW;
            sampled++;
            referenceS3Fifo(key, size, budget);
            Simulated simulated = lfuKeys.get(key);
            if (simulated != null) {
                lfuHits++;
                lfuSimulation.remove(simulated);
            } else {
                while (lfuBytes + size > budget && !lfuSimulation.isEmpty()) {
                    Simulated victim = lfuSimulation.pollFirst();
                    lfuKeys.remove(victim.key);
                    lfuBytes -= victim.size;
                }
                simulated = new Simulated(key, size);
                lfuKeys.put(key, simulated);
                lfuBytes += size;
            }
            simulated.count = segment.accessCount();
            simulated.stamp = ++clock;
            lfuSimulation.add(simulated);
            if (small.size() + main.size() > MAX_SIMULATED || lfuKeys.size() > MAX_SIMULATED) {
                halveSampleRate();
            }
            leastAccessedFirst = pinned || sampled >= MIN_EVIDENCE && lfuHits > s3FifoHits * (1 + MARGIN);
        }

        /**
         * One sampled reference in the S3-FIFO simulation (the paper's: small queue 1/10 of the budget, a 2-bit use
         * counter, ghosts as many as the simulated keys): a hit raises the counter; a miss makes room, then enters
         * main if its key is a ghost, small otherwise.
         */
        private void referenceS3Fifo(String key, long size, long budget) {
            Simulated found = small.get(key);
            if (found == null) {
                found = main.get(key);
            }
            if (found != null) {
                s3FifoHits++;
                found.count = Math.min(found.count + 1, 3);
                return;
            }
            while (smallBytes + mainBytes + size > budget && smallBytes + mainBytes > 0) {
                evictS3Fifo(budget);
            }
            Simulated arrival = new Simulated(key, size);
            if (ghosts.remove(key) != null) {
                main.put(key, arrival);
                mainBytes += size;
            } else {
                small.put(key, arrival);
                smallBytes += size;
            }
        }

        private void evictS3Fifo(long budget) {
            if (smallBytes > budget / 10 || main.isEmpty()) {
                Simulated oldest = small.pollFirstEntry().getValue();
                smallBytes -= oldest.size;
                if (oldest.count > 0) {
                    oldest.count = 0;
                    main.put(oldest.key, oldest);
                    mainBytes += oldest.size;
                } else {
                    ghosts.put(oldest.key, Boolean.TRUE);
                    if (ghosts.size() > MAX_SIMULATED) {
                        ghosts.pollFirstEntry();
                    }
                }
                return;
            }
            Simulated oldest = main.pollFirstEntry().getValue();
            if (oldest.count > 0) {
                oldest.count--;
                main.put(oldest.key, oldest);
            } else {
                mainBytes -= oldest.size;
            }
        }

        /** Halves the sample rate and drops the keys no longer sampled from both simulations. */
        private void halveSampleRate() {
            threshold /= 2;
            small.values().removeIf(e -> {
                boolean drop = !sampledKey(e.key);
                if (drop) {
                    smallBytes -= e.size;
                }
                return drop;
            });
            main.values().removeIf(e -> {
                boolean drop = !sampledKey(e.key);
                if (drop) {
                    mainBytes -= e.size;
                }
                return drop;
            });
            ghosts.keySet().removeIf(key -> !sampledKey(key));
            lfuKeys.values().removeIf(s -> {
                boolean drop = !sampledKey(s.key);
                if (drop) {
                    lfuSimulation.remove(s);
                    lfuBytes -= s.size;
                }
                return drop;
            });
        }

        private boolean sampledKey(String key) {
            int h = key.hashCode() * 0x9E3779B9;
            return (((h ^ (h >>> 16)) * 0x9E3779B9) >>> 16) < threshold;
        }
    }
}
