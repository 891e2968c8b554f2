package dev.kvtier.observe;

import dev.kvtier.KvTierCache;
import dev.kvtier.cuda.CudaException;
import org.junit.jupiter.api.Test;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Micrometer is optional: a cache opens, moves bytes, records JFR events and closes in a class loader
 * that sees kvtier's classes (core, bindings) and the JDK, and no Micrometer; and every core class
 * outside the binder's package links there (its fields' and methods' types resolve). Bodies resolve
 * lazily, so a reference on a path the run does not take is ArchitectureTest's to catch.
 */
class MicrometerAbsentTest {

    @Test
    void theCacheWorksWithoutMicrometerOnTheClassPath() throws Exception {
        URL[] kvtierOnly = {
                KvTierCache.class.getProtectionDomain().getCodeSource().getLocation(),
                CudaException.class.getProtectionDomain().getCodeSource().getLocation(),
                WithoutMicrometer.class.getProtectionDomain().getCodeSource().getLocation()};
        try (URLClassLoader loader = new URLClassLoader("no-micrometer", kvtierOnly, ClassLoader.getPlatformClassLoader())) {
            assertThrows(ClassNotFoundException.class,
                    () -> Class.forName("io.micrometer.core.instrument.MeterRegistry", false, loader));
            @SuppressWarnings("unchecked")
            Callable<String> run = (Callable<String>) Class.forName(WithoutMicrometer.class.getName(), true, loader)
                    .getDeclaredConstructor().newInstance();
            assertEquals("GPU->DISK->CPU: 4096 bytes intact", run.call());

            Path core = Path.of(kvtierOnly[0].toURI());
            List<String> names;
            try (Stream<Path> files = Files.walk(core)) {
                names = files.map(f -> core.relativize(f).toString())
                        .filter(f -> f.endsWith(".class") && !f.startsWith("dev/kvtier/observe/micrometer/")
                                && !f.equals("module-info.class")) // the module descriptor, not a class
                        .map(f -> f.substring(0, f.length() - ".class".length()).replace('/', '.'))
                        .toList();
            }
            assertFalse(names.isEmpty(), "core's classes are in " + core);
            for (String name : names) {
                Class<?> type = Class.forName(name, false, loader);
                type.getDeclaredFields();
                type.getDeclaredMethods();
                type.getDeclaredConstructors();
            }
        }
    }
}
