package dev.kvtier.bench.packaging;

import dev.kvtier.KvTierCache;
import dev.kvtier.cuda.CudaRuntime;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.spi.ToolProvider;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A separate Maven project that depends on the BOM and {@code kvtier-core} only, as the README tells a user to, builds
 * the README's examples (copied verbatim from README.md) on the class path and on the module path, and the segment
 * example runs both ways with the README's {@code --enable-native-access} advice and no restricted-method warning.
 *
 * <p>No {@code mvn install}: this build's artifacts (the POMs of the parent, the BOM, core and bindings, and the
 * jars of core and bindings, made from their class directories when the build has not packaged them yet) are laid
 * out in a local repository under {@code target/consumer/repository}; the nested Maven runs offline with the user's
 * local repository as a read-only tail ({@code maven.repo.local.tail}, Maven 3.9+) for its plugins, so it writes
 * nothing outside {@code target/}. It runs on the JDK that runs this test (22+), so it needs no toolchain.
 */
class ConsumerProjectTest {
    private static final String SEGMENT_EXAMPLE_HEADING = "## Using the cache";
    private static final String PREFIX_EXAMPLE_HEADING = "### Prefix blocks";

    private static Path root;
    private static Path work;
    private static String version;
    private static Path coreJar;
    private static Path bindingsJar;

    @BeforeAll
    static void buildTheConsumerProject() throws Exception {
        root = Path.of(required("kvtier.repository.root"));
        version = required("kvtier.version");
        work = Path.of("target", "consumer").toAbsolutePath();
        deleteRecursively(work);
        Path repository = work.resolve("repository");
        coreJar = publish(repository, "kvtier-core", root.resolve("core/pom.xml"), classesOf(KvTierCache.class));
        bindingsJar = publish(repository, "kvtier-bindings", root.resolve("bindings/pom.xml"),
                classesOf(CudaRuntime.class));
        publish(repository, "kvtier-parent", root.resolve("pom.xml"), null);
        publish(repository, "kvtier-bom", root.resolve("bom/pom.xml"), null);

        Path project = work.resolve("project");
        Files.createDirectories(project.resolve("src/main/java/example"));
        Files.createDirectories(project.resolve("src/module/java"));
        String pom = resource("consumer/pom.xml").replace("@kvtier.version@", version);
        Files.writeString(project.resolve("pom.xml"), pom);
        Files.writeString(project.resolve("src/module/java/module-info.java"),
                "module example.consumer {\n    requires dev.kvtier.core;\n}\n");
        Files.writeString(project.resolve("src/main/java/example/ReadmeExamples.java"),
                readmeExamples(Files.readString(root.resolve("README.md"))));

        String mavenRepository = required("kvtier.maven.repository");
        List<String> maven = List.of(root.resolve("mvnw").toString(), "-B", "-q", "-o",
                "-Dmaven.repo.local=" + repository, "-Dmaven.repo.local.tail=" + mavenRepository, "compile");
        Run build = run(maven, project, 300);
        assertEquals(0, build.exitCode(), () -> "the consumer project did not build: " + maven + "\n" + build.output());
    }

    @Test
    void theReadmeExamplesCompileOnTheClassPath() {
        assertTrue(Files.isRegularFile(work.resolve("project/target/classes/example/ReadmeExamples.class")));
        assertFalse(Files.exists(work.resolve("project/target/classes/module-info.class")));
    }

    @Test
    void theReadmeExamplesCompileOnTheModulePath() {
        assertTrue(Files.isRegularFile(work.resolve("project/target/modular-classes/module-info.class")));
        assertTrue(Files.isRegularFile(work.resolve("project/target/modular-classes/example/ReadmeExamples.class")));
    }

    @Test
    void theSegmentExampleRunsOnTheClassPathWithAllUnnamedNativeAccess() throws Exception {
        Run example = run(List.of(java(), "--enable-native-access=ALL-UNNAMED", "-cp",
                String.join(File.pathSeparator, work.resolve("project/target/classes").toString(),
                        coreJar.toString(), bindingsJar.toString()),
                "example.ReadmeExamples", work.resolve("kv-class-path").toString()), work, 120);
        assertRanCleanly(example);
    }

    @Test
    void theSegmentExampleRunsOnTheModulePathWithTheReadmesNativeAccessModule() throws Exception {
        Run example = run(modulePathRun(List.of("--enable-native-access=dev.kvtier.bindings"), "kv-module-path"), work, 120);
        assertRanCleanly(example);
    }

    @Test
    void withoutNativeAccessTheJdkNamesTheModuleTheReadmeNames() throws Exception {
        // The control for the two runs above: the warning they must not print appears without the option, and
        // asks for exactly the module the README names.
        Run example = run(modulePathRun(List.of(), "kv-no-access"), work, 120);
        assertEquals(0, example.exitCode(), example.output());
        assertTrue(example.output().contains("restricted method")
                && example.output().contains("--enable-native-access=dev.kvtier.bindings"), example.output());
    }

    private static List<String> modulePathRun(List<String> options, String directory) {
        List<String> command = new ArrayList<>(List.of(java()));
        command.addAll(options);
        command.addAll(List.of("--module-path",
                String.join(File.pathSeparator, work.resolve("project/target/modular-classes").toString(),
                        coreJar.toString(), bindingsJar.toString()),
                "--module", "example.consumer/example.ReadmeExamples", work.resolve(directory).toString()));
        return command;
    }

    private static void assertRanCleanly(Run example) {
        assertEquals(0, example.exitCode(), example.output());
        assertTrue(example.output().contains("segment example done"), example.output());
        assertFalse(example.output().contains("restricted method"), example.output());
    }

    /**
     * The README's segment and prefix-block examples inside a class: each verbatim in a method that is compiled;
     * the segment example once more, run by {@code main}, with small budgets and the disk directory given as the
     * argument (the README's 8 GiB and /var/cache/kv are for a server). The prefix example's {@code = ...;}
     * (the hashes a runtime computes) becomes a call, and its free variables are parameters.
     */
    static String readmeExamples(String readme) {
        String segment = javaBlockAfter(readme, SEGMENT_EXAMPLE_HEADING);
        String prefix = javaBlockAfter(readme, PREFIX_EXAMPLE_HEADING).replace("= ...;", "= requestBlockHashes();");
        String runnable = replaceOnce(replaceOnce(replaceOnce(segment,
                "Path.of(\"/var/cache/kv\")", "Path.of(args[0])"),
                "8L << 30", "8L << 20"),
                "32L << 30", "32L << 20");
        return """
                package example;

                import dev.kvtier.*;
                import dev.kvtier.prefix.*;
                import dev.kvtier.prefix.BlockLayout.LayerOrder;
                import dev.kvtier.store.*;
                import java.lang.foreign.Arena;
                import java.lang.foreign.MemorySegment;
                import java.nio.file.Path;
                import java.util.List;

                /** Generated from README.md by ConsumerProjectTest: the README's examples, verbatim. */
                public final class ReadmeExamples {
                    static void segmentExample() throws Exception {
                %s
                    }

                    static void prefixExample(KvTierCache cache, long regionBytes, BlockHash lastCachedHash,
                                              List<BlockHash> newHashes, MemorySegment newBytes) {
                %s
                    }

                    public static void main(String[] args) throws Exception {
                %s
                        System.out.println("segment example done");
                    }

                    static void launchAttention(Object devicePages) {
                    }

                    static List<BlockHash> requestBlockHashes() {
                        return List.of();
                    }
                }
                """.formatted(indent(segment), indent(prefix), indent(runnable));
    }

    private static String javaBlockAfter(String readme, String heading) {
        int at = readme.indexOf("\n" + heading);
        int start = at < 0 ? -1 : readme.indexOf("```java\n", at);
        int end = start < 0 ? -1 : readme.indexOf("\n```", start + 8);
        if (end < 0) {
            fail("README.md has no ```java block after the heading '" + heading + "'");
        }
        return readme.substring(start + 8, end + 1);
    }

    private static String replaceOnce(String text, String target, String replacement) {
        if (!text.contains(target)) {
            fail("the README's segment example no longer contains " + target + ": update ConsumerProjectTest");
        }
        return text.replace(target, replacement);
    }

    private static String indent(String block) {
        return block.lines().map(line -> "        " + line).reduce((a, b) -> a + "\n" + b).orElse("");
    }

    /** Lays out one artifact as a local repository holds it: its POM and, for a jar module, its jar. */
    private static Path publish(Path repository, String artifactId, Path pom, Path classes) throws IOException {
        Path directory = repository.resolve("dev/kvtier").resolve(artifactId).resolve(version);
        Files.createDirectories(directory);
        Files.copy(pom, directory.resolve(artifactId + "-" + version + ".pom"));
        if (classes == null) {
            return null;
        }
        Path jar = directory.resolve(artifactId + "-" + version + ".jar");
        if (Files.isRegularFile(classes)) {
            Files.copy(classes, jar, StandardCopyOption.REPLACE_EXISTING);
        } else {
            // A reactor run that stopped before package (e.g. -pl bench -am test) resolves modules to class directories.
            ToolProvider tool = ToolProvider.findFirst("jar").orElseThrow(() -> new IllegalStateException(
                    "this JDK has no jar tool"));
            int status = tool.run(System.out, System.err, "--create", "--file", jar.toString(), "-C",
                    classes.toString(), ".");
            assertEquals(0, status, "jar --create from " + classes);
        }
        return jar;
    }

    private static Path classesOf(Class<?> type) throws URISyntaxException {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static String required(String property) {
        String value = System.getProperty(property);
        if (value == null || value.isBlank() || value.contains("${")) {
            fail("system property " + property + " is not set (bench/pom.xml's surefire configuration sets it)");
        }
        return value;
    }

    private static String resource(String name) throws IOException {
        try (var in = ConsumerProjectTest.class.getClassLoader().getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("test resource " + name + " is missing");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    record Run(int exitCode, String output) {
    }

    private static Run run(List<String> command, Path directory, long timeoutSeconds) throws Exception {
        Path log = Files.createTempFile(work, "run", ".log");
        ProcessBuilder builder = new ProcessBuilder(new ArrayList<>(command)).directory(directory.toFile())
                .redirectErrorStream(true).redirectOutput(log.toFile());
        // The nested Maven runs on this JDK (22+): no toolchain lookup, no JDK 17 in the way.
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        builder.environment().remove("MAVEN_OPTS");
        Process process = builder.start();
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            fail(command + " did not finish within " + timeoutSeconds + " s:\n" + Files.readString(log));
        }
        return new Run(process.exitValue(), Files.readString(log));
    }

    private static void deleteRecursively(Path directory) {
        if (!Files.exists(directory)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(directory)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.delete(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
