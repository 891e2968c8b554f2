package dev.kvtier.tiering;

import dev.kvtier.CacheChangeListener;
import dev.kvtier.store.Tier;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which listeners make {@code ensureResident} read the clock, and who hears completions. */
class ChangeListenersTest {

    /** Follows changes only: must not cost resident hits their timing. */
    private static class ChangesOnly implements CacheChangeListener {
        final List<String> heard = new ArrayList<>();

        @Override
        public void segmentAdded(String key, Tier tier, long bytes) {
            heard.add("added " + key);
        }
    }

    private static class Timing implements CacheChangeListener {
        final List<String> heard = new ArrayList<>();

        @Override
        public void ensureResidentCompleted(String key, Tier tier, Tier foundOn, long nanos) {
            heard.add("resident " + key);
        }
    }

    @Test
    void onlyListenersThatOverrideTheCompletionAreTimed() {
        ChangeListeners listeners = new ChangeListeners();
        ChangesOnly changes = new ChangesOnly();
        Timing timing = new Timing();

        listeners.add(changes);
        assertFalse(listeners.anyTimed(), "a listener without ensureResidentCompleted asks for no timing");
        listeners.add(timing);
        assertTrue(listeners.anyTimed());

        listeners.added("a", Tier.GPU, 1);
        listeners.ensureResidentCompleted("a", Tier.GPU, Tier.GPU, 5);
        assertEquals(List.of(), changes.heard, "queued where the change is made, delivered after the operation");
        listeners.deliver();
        assertEquals(List.of("added a"), changes.heard);
        assertEquals(List.of("resident a"), timing.heard);

        assertTrue(listeners.remove(timing));
        assertFalse(listeners.anyTimed(), "removing the timed listener stops the timing");
        assertFalse(listeners.remove(timing), "already removed");
        listeners.added("b", Tier.CPU, 1);
        listeners.deliver();
        assertEquals(List.of("added a", "added b"), changes.heard);
    }

    @Test
    void listenersAreJudgedByTheMethodsTheirClassHas() {
        assertFalse(ChangeListeners.wantsResidencyTimes(new CacheChangeListener() { }));
        assertFalse(ChangeListeners.wantsResidencyTimes(new ChangesOnly()));
        assertTrue(ChangeListeners.wantsResidencyTimes(new Timing() { }), "an inherited override counts");
        assertTrue(ChangeListeners.wantsResidencyTimes(new CacheChangeListener() {
            @Override
            public void ensureResidentCompleted(String key, Tier tier, Tier foundOn, long nanos) {
            }
        }));
    }
}
