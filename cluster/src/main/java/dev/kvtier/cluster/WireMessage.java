package dev.kvtier.cluster;

import dev.kvtier.prefix.BlockHash;
import java.util.List;

/**
 * A message as {@link WireFormat} encodes and decodes it. Immutable; lists are copied.
 */
public sealed interface WireMessage {

    /**
     * One publisher's message on the event stream: the events of one engine step (or, when {@code reset}, the start
     * of a re-announcement: the receiver forgets everything it knew of {@code rank}, then applies {@code events}).
     *
     * @param rank the publishing rank
     * @param epoch the publisher's incarnation; a restarted rank has a larger one, and older epochs are stale
     * @param sequence the publisher's message number within its epoch, from 1, one more per message
     * @param reset whether the receiver must forget the rank's earlier state (restart, or an answer to a resync request)
     * @param host where the rank runs (for routing hints); may be empty, at most {@link WireFormat#MAX_HOST_BYTES} bytes
     * @param events the changes, in the order they were committed
     */
    record RankBatch(int rank, long epoch, long sequence, boolean reset, String host, List<ClusterEvent> events)
            implements WireMessage {
        /**
         * Checks the fields and copies {@code events}.
         *
         * @throws IllegalArgumentException for a negative rank or epoch, a sequence below 1, or null host or events
         */
        public RankBatch {
            if (rank < 0 || epoch < 0 || sequence < 1) {
                throw new IllegalArgumentException("rank and epoch must be >= 0 and sequence >= 1, got rank " + rank
                        + ", epoch " + epoch + ", sequence " + sequence);
            }
            if (host == null || events == null) {
                throw new IllegalArgumentException("host and events must not be null");
            }
            events = List.copyOf(events);
        }
    }

    /**
     * Control: a consumer that lost track asks {@code rank} (or every rank, when {@code allRanks}) to reset and
     * re-announce what it holds.
     *
     * @param allRanks whether every rank is asked; {@code rank} is then ignored (0 by convention)
     * @param rank     the rank asked, {@code >= 0}
     */
    record ResyncRequest(boolean allRanks, int rank) implements WireMessage {
        /**
         * Checks the rank.
         *
         * @throws IllegalArgumentException for a negative rank
         */
        public ResyncRequest {
            if (rank < 0) {
                throw new IllegalArgumentException("rank must be >= 0, got " + rank);
            }
        }
    }

    /**
     * Control: the router sends {@code rank} the prefix a request routed to it will reuse, so that it can promote
     * those blocks toward the GPU before the request arrives.
     *
     * @param rank           the rank that should prefetch, {@code >= 0}; other ranks ignore the hint
     * @param reusableTokens the tokens {@code blocks} cover, {@code >= 0}
     * @param blocks         the reusable blocks' chain hashes, first block first (copied)
     */
    record PrefetchHint(int rank, long reusableTokens, List<BlockHash> blocks) implements WireMessage {
        /**
         * Checks the fields and copies {@code blocks}.
         *
         * @throws IllegalArgumentException for a negative rank or token count
         * @throws NullPointerException     if {@code blocks} is or contains null ({@link List#copyOf})
         */
        public PrefetchHint {

            if (rank < 0 || reusableTokens < 0) {
                throw new IllegalArgumentException("rank and reusableTokens must be >= 0, got rank " + rank
                        + ", reusableTokens " + reusableTokens);
            }
            blocks = List.copyOf(blocks);
        }
    }
}
