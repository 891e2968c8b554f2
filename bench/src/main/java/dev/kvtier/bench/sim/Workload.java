package dev.kvtier.bench.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The requests of one run, generated up front from the seed so that the same options always play the
 * same requests with the same bytes, however many threads serve them. Immutable and thread-safe.
 *
 * <p>A session is a chat: each request appends one turn (a segment of {@code tokens x bytesPerToken}
 * bytes at the next token positions). After {@code maxTurns} turns the conversation ends -- its segments
 * are removed -- and the session's next request starts a new conversation at position 0.
 */
public final class Workload {

    /**
     * One request.
     *
     * @param index               position in the run, from 0
     * @param session             which session (0 = most popular)
     * @param ordinalInSession    how many earlier requests this session had: requests of one session are served in this order
     * @param conversation        which conversation of the session (from 0)
     * @param turn                turn within the conversation (from 0); turns {@code 0..turn-1} must be made resident first
     * @param tokens              tokens of the new turn
     * @param startPosition       token position of the new turn's first token
     * @param endsConversation    the conversation before this one must be removed first (this is turn 0 of a later conversation)
     */
    public record Request(int index, int session, int ordinalInSession, int conversation, int turn, int tokens,
                          long startPosition, boolean endsConversation) {

        /** The new turn's segment key. */
        public String key() {
            return Workload.key(session, conversation, turn);
        }
    }

    private final List<Request> requests;
    private final long bytesPerToken;
    private final long peakLiveBytes;
    private final long totalSegmentBytes;
    private final long largestSegmentBytes;
    private final long seed;

    private Workload(List<Request> requests, long bytesPerToken, long peakLiveBytes, long totalSegmentBytes,
                     long largestSegmentBytes, long seed) {
        this.requests = requests;
        this.bytesPerToken = bytesPerToken;
        this.peakLiveBytes = peakLiveBytes;
        this.totalSegmentBytes = totalSegmentBytes;
        this.largestSegmentBytes = largestSegmentBytes;
        this.seed = seed;
    }

    /** Generates the requests described by {@code options}; deterministic for a given seed. */
    public static Workload generate(SimOptions options) {
        SplittableRandom random = new SplittableRandom(options.seed());
        ZipfSampler popularity = new ZipfSampler(options.sessions(), options.zipfExponent());
        long bytesPerToken = options.model().bytesPerToken();
        int[] requestsSoFar = new int[options.sessions()];
        int[] conversation = new int[options.sessions()];
        int[] turn = new int[options.sessions()];
        long[] nextPosition = new long[options.sessions()];
        long[] liveBytesOfSession = new long[options.sessions()];
        long liveBytes = 0;
        long peak = 0;
        long total = 0;
        long largest = 0;
        List<Request> requests = new ArrayList<>(options.requests());
        for (int i = 0; i < options.requests(); i++) {
            int s = popularity.sample(random);
            int tokens = options.turnLengths().sample(random);
            boolean endsConversation = false;
            if (turn[s] == options.maxTurns()) {
                endsConversation = true;
                liveBytes -= liveBytesOfSession[s];
                liveBytesOfSession[s] = 0;
                conversation[s]++;
                turn[s] = 0;
                nextPosition[s] = 0;
            }
            requests.add(new Request(i, s, requestsSoFar[s]++, conversation[s], turn[s], tokens, nextPosition[s],
                    endsConversation));
            long bytes = tokens * bytesPerToken;
            turn[s]++;
            nextPosition[s] += tokens;
            liveBytesOfSession[s] += bytes;
            liveBytes += bytes;
            peak = Math.max(peak, liveBytes);
            total += bytes;
            largest = Math.max(largest, bytes);
        }
        return new Workload(List.copyOf(requests), bytesPerToken, peak, total, largest, options.seed());
    }

    /** The key of a session's conversation's turn, e.g. {@code s3.c1.t7}. */
    public static String key(int session, int conversation, int turn) {
        return "s" + session + ".c" + conversation + ".t" + turn;
    }

    /** The requests in issue order. */
    public List<Request> requests() {
        return requests;
    }

    /** Bytes of one token's KV. */
    public long bytesPerToken() {
        return bytesPerToken;
    }

    /**
     * The most bytes live (written and not yet removed) at any point of the run played in workload order:
     * "the working set". With several request threads the live bytes can briefly exceed it, because a new
     * turn of one session may be written before another session's finished conversation is removed.
     */
    public long peakLiveBytes() {
        return peakLiveBytes;
    }

    /** Bytes of every segment the run writes. */
    public long totalSegmentBytes() {
        return totalSegmentBytes;
    }

    /** The largest segment, in bytes: every tier budget must hold at least this. */
    public long largestSegmentBytes() {
        return largestSegmentBytes;
    }

    /** The seed the requests and the segments' bytes derive from. */
    public long seed() {
        return seed;
    }

    /** The content seed of a segment: every byte of the segment is a function of this. */
    public long contentSeed(int session, int conversation, int turn) {
        return SegmentContent.mix(seed, session, conversation, turn);
    }
}
