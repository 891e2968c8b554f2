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
}
