package dev.kvtier.cuda;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where the C parts (fake libcudart, ABI printer, bench helper) were built: system property {@code kvtier.native.dir},
 * set by surefire. Tests that need them skip with the reason the native build wrote to {@code status} when it could not
 * build them (no gcc or no CUDA headers); on a machine that has both, they run.
 */
final class NativeBuild {

    private NativeBuild() {
    }

    static Path directory() {
        String dir = System.getProperty("kvtier.native.dir");
        Assumptions.assumeTrue(dir != null && !dir.isBlank(),
                "system property kvtier.native.dir is not set (run through Maven, which sets it to <root>/native/build)");
        return Path.of(dir);
    }

    /** Skips the calling test, with the build's own reason, unless the native parts were built. */
    static Path requireBuilt() {
        Path dir = directory();
        Path status = dir.resolve("status");
        String text;
        try {
            text = Files.exists(status) ? Files.readString(status).strip() : "no status file at " + status;
        } catch (IOException e) {
            text = "cannot read " + status + ": " + e;
        }
        Assumptions.assumeTrue(text.equals("built"), "native parts not built: " + text);
        return dir;
    }

    static Path fakeLibrary() {
        return requireBuilt().resolve("fakecudart/libcudart.so");
    }

    static Path abiPrinter() {
        return requireBuilt().resolve("abi/cudart_abi");
    }

    /** native/jextract/cudart.args, found from the native build directory (<root>/native/build). */
    static Path argFile() {
        return directory().getParent().resolve("jextract/cudart.args");
    }
}
