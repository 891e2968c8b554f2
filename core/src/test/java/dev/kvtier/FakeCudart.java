package dev.kvtier;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The host-emulated libcudart built under {@code kvtier.native.dir} (native/fakecudart) and its
 * control functions; a test using it is skipped, with the native build's reason, where it was not built.
 */
@SuppressWarnings("restricted")
final class FakeCudart {
    private final Path library;
    private final MethodHandle configure;
    private final MethodHandle reset;
    private final MethodHandle liveCount;
    private final MethodHandle callCount;

    private FakeCudart(Path library) {
        this.library = library;
        Linker linker = Linker.nativeLinker();
        SymbolLookup lookup = SymbolLookup.libraryLookup(library, Arena.global());
        configure = linker.downcallHandle(lookup.find("kvtierfake_configure").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
        reset = linker.downcallHandle(lookup.find("kvtierfake_reset").orElseThrow(), FunctionDescriptor.ofVoid());
        liveCount = linker.downcallHandle(lookup.find("kvtierfake_live_count").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.ADDRESS));
        callCount = linker.downcallHandle(lookup.find("kvtierfake_call_count").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.ADDRESS));
    }

    /** The fake, or the calling test is skipped with the reason the native build gave. */
    static FakeCudart open() {
        String dir = System.getProperty("kvtier.native.dir");
        Assumptions.assumeTrue(dir != null && !dir.isBlank(), "system property kvtier.native.dir is not set");
        Path status = Path.of(dir, "status");
        String text;
        try {
            text = Files.exists(status) ? Files.readString(status).strip() : "no status file at " + status;
        } catch (IOException e) {
            text = "cannot read " + status + ": " + e;
        }
        Assumptions.assumeTrue(text.equals("built"), "native parts not built: " + text);
        return new FakeCudart(Path.of(dir, "fakecudart", "libcudart.so"));
    }

    Path library() {
        return library;
    }

    void configure(String spec) {
        try (Arena arena = Arena.ofConfined()) {
            assertEquals(0, (int) configure.invokeExact(arena.allocateFrom(spec)), "fake rejected '" + spec + "'");
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    void reset() {
        try {
            reset.invokeExact();
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    long liveCount(String what) {
        try (Arena arena = Arena.ofConfined()) {
            return (long) liveCount.invokeExact(arena.allocateFrom(what));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    long callCount(String function) {
        try (Arena arena = Arena.ofConfined()) {
            return (long) callCount.invokeExact(arena.allocateFrom(function));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new RuntimeException(t);
    }

    /** Nothing allocated, registered, or created in the fake is still alive. */
    void assertNothingLive() {
        for (String kind : new String[] {"device", "pinned", "registered", "streams", "events", "device_bytes"}) {
            assertEquals(0, liveCount(kind), "live " + kind + " left in the fake libcudart");
        }
    }
}
