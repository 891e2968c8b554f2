package dev.kvtier.store.policy;

import dev.kvtier.store.SegmentHandle;
import dev.kvtier.store.Tier;
import dev.kvtier.store.TieredStore;

import java.util.AbstractList;
import java.util.List;
import java.util.function.Function;

/**
 * The key list {@link TieredStore#candidatesForDemotion(Tier, long, List)} hands a tracker: it keeps the
 * store's entries named rather than their keys, so the caller reaches each candidate's record (and its
 * attachment) with no key lookup. The built-in trackers add through {@link #add(List, PolicyNode)}, which
 * hands over the entry itself; a custom tracker's {@code add(String)} is looked up in the store (under
 * the store's lock, which the caller holds). Read as a list of strings it answers the keys. Not
 * thread-safe: filled under the store's lock, then owned by the one caller.
 */
public final class CandidateList extends AbstractList<String> {
    private final List<SegmentHandle> entries;
    private final Function<String, ? extends SegmentHandle> lookup;

    public CandidateList(List<SegmentHandle> entries, Function<String, ? extends SegmentHandle> lookup) {
        this.entries = entries;
        this.lookup = lookup;
    }

    /**
     * Names {@code node} (the store's entry: see {@link PolicyNode#of}) in {@code keys}: the entry itself when
     * {@code keys} is a {@link CandidateList}, its key otherwise.
     */
    public static void add(List<String> keys, PolicyNode node) {
        if (keys instanceof CandidateList candidates) {
            candidates.entries.add((SegmentHandle) node);
        } else {
            keys.add(node.key);
        }
    }

    @Override
    public boolean add(String key) {
        SegmentHandle entry = lookup.apply(key);
        if (entry == null) {
            throw new IllegalStateException("the tracker named segment \"" + key + "\", which is not registered");
        }
        entries.add(entry);
        return true;
    }

    @Override
    public String get(int index) {
        return entries.get(index).key();
    }

    @Override
    public int size() {
        return entries.size();
    }
}
