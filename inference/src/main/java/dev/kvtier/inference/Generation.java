package dev.kvtier.inference;

import java.util.List;

/**
 * What one request produced: the greedy tokens, the logits each was chosen from, and how the prompt's keys
 * and values were obtained. Immutable (the arrays are not copied: do not change them).
 *
 * @param tokens            the generated tokens, in order
 * @param logits            {@code logits.get(i)} chose {@code tokens[i]}
 * @param cachedTokens      prompt tokens whose keys and values came from the cache
 * @param prefilledTokens   prompt tokens computed (the rest of the prompt)
 * @param restoreFailures   restores that failed and were replaced by recomputing (0 or 1 per request)
 * @param timeToFirstTokenNanos from the call until the first token was chosen
 * @param totalNanos        from the call until the last token was chosen
 */
public record Generation(int[] tokens, List<float[]> logits, int cachedTokens, int prefilledTokens,
        int restoreFailures, long timeToFirstTokenNanos, long totalNanos) {

    /**
     * Whether {@code other} produced the same output as this: equal tokens, and every logit they were chosen from
     * equal to the bit. How the prompt's keys and values were obtained, and the times, are not compared: a request
     * served from the cache gives the same output as one recomputed, or the cache served a wrong byte.
     *
     * @param other another request's generation; not null
     * @return true when the tokens are equal and the logits are the same bits, list for list
     */
    public boolean sameOutputAs(Generation other) {
        if (!java.util.Arrays.equals(tokens, other.tokens) || logits.size() != other.logits.size()) {
            return false;
        }
        for (int i = 0; i < logits.size(); i++) {
            float[] mine = logits.get(i);
            float[] theirs = other.logits.get(i);
            if (mine.length != theirs.length) {
                return false;
            }
            for (int j = 0; j < mine.length; j++) {
                if (Float.floatToRawIntBits(mine[j]) != Float.floatToRawIntBits(theirs[j])) {
                    return false;
                }
            }
        }
        return true;
    }
}
