package dev.kvtier.observe;

import dev.kvtier.store.Tier;
import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;

/**
 * JFR event {@code dev.kvtier.ChecksumFailure}: a segment's bytes did not match the CRC32C taken
 * when they were put, either arriving on DISK (the copy did not deliver them) or leaving it (the
 * file changed underneath). The bytes were not served. Rare and worth a stack trace, so enabled by
 * default in any recording; {@link #emit} allocates only when a recording takes it. Thread-safe.
 */
@Name("dev.kvtier.ChecksumFailure")
@Label("kvtier Checksum Failure")
@Category("kvtier")
@Description("A segment's bytes did not match the CRC32C taken when they were put; they were not served")
public final class ChecksumFailureEvent extends Event {
    private static final ChecksumFailureEvent TYPE = new ChecksumFailureEvent();

    @Label("Key")
    String key;
    @Label("Tier")
    String tier;
    @Label("Check")
    @Description("arrival (bytes just copied to the tier) or departure (bytes about to leave it)")
    String check;
    @Label("Expected CRC32C")
    String expected;
    @Label("Actual CRC32C")
    String actual;

    private ChecksumFailureEvent() {
    }

    /**
     * Records a mismatch when a recording takes it.
     *
     * @param key      the key of the segment whose bytes failed the check
     * @param tier     the tier the bytes were checked on
     * @param arrival  true when the bytes were just copied onto {@code tier}, false when checked before leaving it
     * @param expected the CRC32C recorded when the bytes were put
     * @param actual   the CRC32C of the bytes as they were read
     */
    public static void emit(String key, Tier tier, boolean arrival, int expected, int actual) {
        if (!FlightEvents.COMPILED_IN || !TYPE.isEnabled()) {
            return;
        }
        ChecksumFailureEvent event = new ChecksumFailureEvent();
        if (event.shouldCommit()) {
            event.key = key;
            event.tier = tier.name();
            event.check = arrival ? "arrival" : "departure";
            event.expected = String.format("%08x", expected);
            event.actual = String.format("%08x", actual);
            event.commit();
        }
    }
}
