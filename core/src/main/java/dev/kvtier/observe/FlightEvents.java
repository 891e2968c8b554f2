package dev.kvtier.observe;

/**
 * Whether kvtier's JFR events exist in this JVM at all. With {@code -Dkvtier.jfr.events=false} every
 * {@code beginIfRecording}/{@code emit} answers at once from this constant, which the JIT folds: the
 * events are gone from the compiled code, as if never written. That is the baseline the benchmark
 * {@code dev.kvtier.bench.observe.FlightEventCostBenchmark} measures the disabled events against; in
 * service leave it on (a disabled event costs one well-predicted branch on a final field).
 */
final class FlightEvents {
    /** Read once at class initialization: {@code -Dkvtier.jfr.events=false} removes the events. */
    static final boolean COMPILED_IN = !"false".equalsIgnoreCase(System.getProperty("kvtier.jfr.events"));

    private FlightEvents() {
    }
}
