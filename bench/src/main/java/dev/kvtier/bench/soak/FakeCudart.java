package dev.kvtier.bench.soak;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The control API of the host-emulated libcudart (native/fakecudart/kvtierfake.h): {@code kvtierfake_configure},
 * {@code _reset}, {@code _live_count} and {@code _call_count}, looked up in the same file the cache loads (dlopen of
 * one path is one library, so one configuration for both).
 *
 * <p>Why not the bindings' test helper {@code FakeCuda}: that one lives in a test-jar and reports through JUnit
 * assertions, while the soak is a program run for ten minutes (bench's main scope, like the simulator). This class is
 * the few downcalls the soak needs and nothing else. Thread-safe: the fake locks every control call.
 */
@SuppressWarnings("restricted")
final class FakeCudart {
    /** The object kinds {@code kvtierfake_live_count} knows, in the order the report lists them. */
    static final List<String> LIVE_KINDS = List.of("device", "pinned", "registered", "streams", "events", "device_bytes");

    private static final Linker LINKER = Linker.nativeLinker();

    private final Path library;
    private final MethodHandle configure;
    private final MethodHandle reset;
    private final MethodHandle liveCount;
    private final MethodHandle callCount;

    private FakeCudart(Path library, SymbolLookup lookup) {
        this.library = library;
        configure = LINKER.downcallHandle(lookup.find("kvtierfake_configure").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
        reset = LINKER.downcallHandle(lookup.find("kvtierfake_reset").orElseThrow(), FunctionDescriptor.ofVoid());
        liveCount = LINKER.downcallHandle(lookup.find("kvtierfake_live_count").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.ADDRESS));
        callCount = LINKER.downcallHandle(lookup.find("kvtierfake_call_count").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.ADDRESS));
    }

    /**
     * The fake's controls in {@code library}, or empty when the file is a real libcudart (it exports no
     * {@code kvtierfake_*} symbol): the soak then injects no CUDA faults.
     *
     * @throws IllegalArgumentException naming the path if it cannot be loaded at all
     */
    static Optional<FakeCudart> open(Path library) {
        SymbolLookup lookup;
        try {
            lookup = SymbolLookup.libraryLookup(library, Arena.global());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("cannot load libcudart " + library + ": " + e.getMessage(), e);
        }
        for (String symbol : new String[] {"kvtierfake_configure", "kvtierfake_reset", "kvtierfake_live_count",
                "kvtierfake_call_count"}) {
            if (lookup.find(symbol).isEmpty()) {
                return Optional.empty();
            }
        }
        return Optional.of(new FakeCudart(library, lookup));
    }

    /** The library file. */
    Path library() {
        return library;
    }

    /**
     * Applies a spec on top of the current configuration (all or nothing).
     *
     * @throws IllegalArgumentException naming the spec and the rejected item (the fake prints why to stderr)
     */
    void configure(String spec) {
        int bad;
        try (Arena arena = Arena.ofConfined()) {
            bad = (int) configure.invokeExact(arena.allocateFrom(spec));
        } catch (Throwable t) {
            throw new IllegalStateException("kvtierfake_configure(\"" + spec + "\") failed", t);
        }
        if (bad != 0) {
            throw new IllegalArgumentException("the fake rejected item " + bad + " of \"" + spec + "\"");
        }
    }

    /** Drains every stream, then drops fault rules, pending and sticky errors (allocations are kept). */
    void reset() {
        try {
            reset.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException("kvtierfake_reset failed", t);
        }
    }

    /** Live objects of {@code kind} (one of {@link #LIVE_KINDS}). */
    long liveCount(String kind) {
        try (Arena arena = Arena.ofConfined()) {
            return (long) liveCount.invokeExact(arena.allocateFrom(kind));
        } catch (Throwable t) {
            throw new IllegalStateException("kvtierfake_live_count(\"" + kind + "\") failed", t);
        }
    }

    /** Every live count, by kind. */
    Map<String, Long> liveCounts() {
        Map<String, Long> counts = new LinkedHashMap<>();
        for (String kind : LIVE_KINDS) {
            counts.put(kind, liveCount(kind));
        }
        return counts;
    }

    /** Calls of {@code function} since the library loaded, failed ones included; -1 for a name the fake does not bind. */
    long callCount(String function) {
        try (Arena arena = Arena.ofConfined()) {
            return (long) callCount.invokeExact(arena.allocateFrom(function));
        } catch (Throwable t) {
            throw new IllegalStateException("kvtierfake_call_count(\"" + function + "\") failed", t);
        }
    }
}
