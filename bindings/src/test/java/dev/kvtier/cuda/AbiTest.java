package dev.kvtier.cuda;

import dev.kvtier.cuda.runtime.cudart_h;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.AddressLayout;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Java bindings against what the C compiler says from the real CUDA headers ({@code native/abi/cudart_abi}): every
 * constant's value, every typedef's size, every struct's size and alignment, every field's offset and size (nested ones
 * by dotted path). Both directions: the printer's facts and the Java side's cover the same names.
 */
class AbiTest {

    /** The printer's output, parsed: kind -> name -> the numbers after the name. */
    record AbiFacts(Map<String, Map<String, List<String>>> byKind) {
        Map<String, List<String>> of(String kind) {
            return byKind.getOrDefault(kind, Map.of());
        }
    }

    static AbiFacts runPrinter(String... libraryArgument) throws IOException, InterruptedException {
        Path printer = NativeBuild.abiPrinter();
        List<String> command = new ArrayList<>(List.of(printer.toString()));
        command.addAll(Arrays.asList(libraryArgument));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(30, TimeUnit.SECONDS), "cudart_abi did not finish");
        assertEquals(0, process.exitValue(), "cudart_abi failed:\n" + output);
        Map<String, Map<String, List<String>>> facts = new TreeMap<>();
        for (String line : output.split("\n")) {
            String[] words = line.strip().split("\\s+");
            if (words.length < 2) {
                continue;
            }
            facts.computeIfAbsent(words[0], k -> new TreeMap<>())
                    .put(words[1], List.of(words).subList(2, words.length));
        }
        assertEquals(List.of(), facts.get("abi_format").keySet().stream().filter(v -> !v.equals("1")).toList(),
                "this test reads abi_format 1");
        return new AbiFacts(facts);
    }

    /** Constants of cudart_h: public static no-argument int methods that are not bound functions. */
    static Map<String, Integer> javaConstants() throws ReflectiveOperationException {
        Set<String> functions = javaFunctionBindings();
        Map<String, Integer> constants = new TreeMap<>();
        for (Method method : cudart_h.class.getDeclaredMethods()) {
            if (Modifier.isPublic(method.getModifiers()) && Modifier.isStatic(method.getModifiers())
                    && method.getParameterCount() == 0 && method.getReturnType() == int.class
                    && !functions.contains(method.getName())) {
                constants.put(method.getName(), (Integer) method.invoke(null));
            }
        }
        return constants;
    }

    /** Binding names of cudart_h: every method {@code f} with a companion {@code f$descriptor()}. */
    static Set<String> javaFunctionBindings() {
        Set<String> names = new TreeSet<>();
        for (Method method : cudart_h.class.getDeclaredMethods()) {
            if (method.getName().endsWith("$descriptor")) {
                names.add(method.getName().substring(0, method.getName().length() - "$descriptor".length()));
            }
        }
        return names;
    }

    /** Typedef layouts of cudart_h (public static MemoryLayout fields not named C_*), plus upcall classes. */
    static Map<String, Long> javaTypedefSizes() throws ReflectiveOperationException {
        Map<String, Long> sizes = new TreeMap<>();
        for (Field field : cudart_h.class.getDeclaredFields()) {
            if (Modifier.isPublic(field.getModifiers()) && Modifier.isStatic(field.getModifiers())
                    && MemoryLayout.class.isAssignableFrom(field.getType()) && !field.getName().startsWith("C_")) {
                sizes.put(field.getName(), ((MemoryLayout) field.get(null)).byteSize());
            }
        }
        // A function-pointer typedef is a class in jextract's shape; its value is a C pointer.
        Class.forName("dev.kvtier.cuda.runtime.cudaHostFn_t");
        sizes.put("cudaHostFn_t", cudart_h.C_POINTER.byteSize());
        return sizes;
    }

    static GroupLayout structLayout(String name) throws ReflectiveOperationException {
        Class<?> struct = Class.forName("dev.kvtier.cuda.runtime." + name);
        return (GroupLayout) struct.getMethod("layout").invoke(null);
    }

    @Test
    void everyConstantHasTheHeadersValue() throws Exception {
        AbiFacts facts = runPrinter();
        Map<String, Integer> java = javaConstants();
        Map<String, List<String>> c = facts.of("constant");
        assertFalse(c.isEmpty());
        assertEquals(new TreeSet<>(c.keySet()), new TreeSet<>(java.keySet()), "constants: printer vs cudart_h");
        for (var entry : c.entrySet()) {
            assertEquals(Long.parseLong(entry.getValue().getFirst()), (long) java.get(entry.getKey()), entry.getKey());
        }
    }

    @Test
    void everyTypedefHasTheHeadersSize() throws Exception {
        Map<String, List<String>> c = runPrinter().of("typedef");
        Map<String, Long> java = javaTypedefSizes();
        assertEquals(new TreeSet<>(c.keySet()), new TreeSet<>(java.keySet()), "typedefs: printer vs cudart_h");
        for (var entry : c.entrySet()) {
            assertEquals(Long.parseLong(entry.getValue().getFirst()), java.get(entry.getKey()), entry.getKey());
        }
    }

    @Test
    void everyStructAndFieldHasTheHeadersLayout() throws Exception {
        AbiFacts facts = runPrinter();
        Map<String, List<String>> structs = facts.of("struct");
        assertFalse(structs.isEmpty());
        for (var entry : structs.entrySet()) {
            GroupLayout layout = structLayout(entry.getKey());
            Class<?> struct = Class.forName("dev.kvtier.cuda.runtime." + entry.getKey());
            assertEquals(Long.parseLong(entry.getValue().get(0)), layout.byteSize(), entry.getKey() + " size");
            assertEquals(Long.parseLong(entry.getValue().get(0)), (long) struct.getMethod("sizeof").invoke(null));
            assertEquals(Long.parseLong(entry.getValue().get(1)), layout.byteAlignment(), entry.getKey() + " align");
            // Every top-level Java field is one the printer knows, and the other way round.
            Set<String> javaFields = new TreeSet<>();
            layout.memberLayouts().forEach(m -> m.name().ifPresent(javaFields::add));
            Set<String> cFields = new TreeSet<>();
            facts.of("field").keySet().stream()
                    .filter(path -> path.startsWith(entry.getKey() + "."))
                    .map(path -> path.substring(entry.getKey().length() + 1))
                    .filter(path -> !path.contains("."))
                    .forEach(cFields::add);
            assertEquals(cFields, javaFields, entry.getKey() + " fields");
        }
        int checked = 0;
        for (var entry : facts.of("field").entrySet()) {
            String[] path = entry.getKey().split("\\.");
            GroupLayout layout = structLayout(path[0]);
            MemoryLayout.PathElement[] elements = Arrays.stream(path, 1, path.length)
                    .map(MemoryLayout.PathElement::groupElement).toArray(MemoryLayout.PathElement[]::new);
            assertEquals(Long.parseLong(entry.getValue().get(0)), layout.byteOffset(elements), entry.getKey() + " offset");
            assertEquals(Long.parseLong(entry.getValue().get(1)), layout.select(elements).byteSize(),
                    entry.getKey() + " size");
            if (path.length == 2) {
                Class<?> struct = Class.forName("dev.kvtier.cuda.runtime." + path[0]);
                assertEquals(Long.parseLong(entry.getValue().get(0)),
                        (long) struct.getMethod(path[1] + "$offset").invoke(null), entry.getKey() + "$offset()");
                assertEquals(Long.parseLong(entry.getValue().get(1)),
                        ((MemoryLayout) struct.getMethod(path[1] + "$layout").invoke(null)).byteSize());
            }
            checked++;
        }
        assertTrue(checked >= 10, "expected the printer to report every field, got " + checked);
    }

    @Test
    void theJavaLayoutsMatchThisPlatformsCTypes() {
        // size_t, pointers and int as the descriptors assume them (LP64).
        assertEquals(ValueLayout.ADDRESS.byteSize(), cudart_h.C_POINTER.byteSize());
        assertEquals(8, cudart_h.C_LONG.byteSize());
        assertEquals(4, cudart_h.C_INT.byteSize());
        AddressLayout stream = cudart_h.cudaStream_t;
        assertEquals(8, stream.byteSize());
        assertEquals(0, structLayoutUnchecked("cudaMemLocation").byteOffset(groupElement("type")));
    }

    private static GroupLayout structLayoutUnchecked(String name) {
        try {
            return structLayout(name);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void theFakeExportsEveryBoundSymbolAndReportsTheHeadersVersion() throws Exception {
        AbiFacts facts = runPrinter(NativeBuild.fakeLibrary().toString());
        Map<String, List<String>> symbols = facts.of("symbol");
        assertFalse(symbols.isEmpty());
        symbols.forEach((name, state) -> assertEquals(List.of("present"), state, name + " in the fake"));
        assertEquals(String.valueOf(cudart_h.CUDART_VERSION()), facts.of("runtime_version").keySet().iterator().next());
    }

    @Test
    void theRealLibraryExportsEveryBoundSymbolWhereInstalled() throws Exception {
        AbiFacts facts = runPrinter();
        org.junit.jupiter.api.Assumptions.assumeFalse(facts.of("library").containsKey("error"),
                "no real libcudart to dlsym: " + facts.of("library"));
        facts.of("symbol").forEach((name, state) -> assertEquals(List.of("present"), state, name + " in the real libcudart"));
    }
}
