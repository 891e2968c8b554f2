package dev.kvtier.cuda;

import dev.kvtier.cuda.runtime.CudartDescriptors;
import dev.kvtier.cuda.runtime.cudart_h;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * One list of what is bound: the jextract @argfile (native/jextract/cudart.args), the Java bindings (by reflection on
 * cudart_h and the runtime package) and the fake libcudart (dlsym of every function) cover exactly the same symbols.
 */
@SuppressWarnings("restricted")
class BindingCoverageTest {

    static List<String> argFileLines() throws Exception {
        Path argFile = NativeBuild.argFile();
        assumeTrue(Files.exists(argFile), "no @argfile at " + argFile);
        return Files.readAllLines(argFile).stream().map(String::strip).filter(l -> !l.isEmpty() && !l.startsWith("#"))
                .toList();
    }

    static Set<String> included(List<String> lines, String option) {
        return lines.stream().filter(l -> l.startsWith(option + " "))
                .map(l -> l.substring(option.length() + 1).strip()).collect(Collectors.toCollection(TreeSet::new));
    }

    @Test
    void argFileAndJavaBindingsBindTheSameFunctions() throws Exception {
        Set<String> argFunctions = included(argFileLines(), "--include-function");
        Set<String> javaSymbols = AbiTest.javaFunctionBindings().stream().map(CudartDescriptors::symbolOf)
                .collect(Collectors.toCollection(TreeSet::new));
        assertEquals(argFunctions, javaSymbols);
        assertEquals(AbiTest.javaFunctionBindings(), new TreeSet<>(CudartDescriptors.byBindingName().keySet()),
                "every cudart_h function has its descriptor in CudartDescriptors and no other");
    }

    @Test
    void argFileAndJavaBindingsDeclareTheSameConstantsTypedefsAndStructs() throws Exception {
        List<String> lines = argFileLines();
        assertEquals(included(lines, "--include-constant"), new TreeSet<>(AbiTest.javaConstants().keySet()));
        assertEquals(included(lines, "--include-typedef"), new TreeSet<>(AbiTest.javaTypedefSizes().keySet()));
        for (String struct : included(lines, "--include-struct")) {
            assertTrue(AbiTest.structLayout(struct).name().orElseThrow().equals(struct), struct);
        }
    }

    @Test
    void argFileNamesTheHeaderClassAndPackageWeUse() throws Exception {
        List<String> lines = argFileLines();
        assertTrue(lines.contains("-t " + cudart_h.class.getPackageName()), lines.toString());
        assertTrue(lines.contains("--header-class-name " + cudart_h.class.getSimpleName()), lines.toString());
    }

    @Test
    void theFakeExportsEveryBoundFunction() throws Exception {
        Set<String> argFunctions = included(argFileLines(), "--include-function");
        SymbolLookup fake = SymbolLookup.libraryLookup(NativeBuild.fakeLibrary(), Arena.global());
        Set<String> missing = argFunctions.stream().filter(name -> fake.find(name).isEmpty())
                .collect(Collectors.toCollection(TreeSet::new));
        assertEquals(Set.of(), missing, "bound functions the fake does not export");
        assertTrue(fake.find("kvtierfake_configure").isPresent(), "the fake's control API");
    }
}
