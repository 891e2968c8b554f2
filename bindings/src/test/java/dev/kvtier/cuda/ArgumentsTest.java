package dev.kvtier.cuda;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The project's null convention holds in the bindings too: an IllegalArgumentException naming the argument. */
class ArgumentsTest {
    @Test
    void aNullArgumentIsAnIllegalArgumentNamingIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CudaLibraryLoader.load((Path) null));
        assertEquals("library must not be null", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> CudaRuntime.probe((Path) null));
    }
}
