package dev.kvtier.cluster;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.kvtier.ExportedApiRule;
import dev.kvtier.KvTierCache;
import org.junit.jupiter.api.Test;

import java.util.Set;
import java.util.TreeSet;

/** The cluster module's side of the module boundary (core's is in its {@code ArchitectureTest}). */
class ModuleBoundaryTest {

    @Test
    void exportedPackagesNameOnlyTypesTheirUsersCanName() {
        // dev.kvtier.cluster requires dev.kvtier.core transitively, and core requires jdk.jfr transitively: their
        // exported types are nameable by whoever reads this module. jnats's are not (not required transitively).
        Set<String> nameable = new TreeSet<>(ExportedApiRule.unqualifiedExports(
                ExportedApiRule.descriptorOf(KvTierCache.class)));
        nameable.add("jdk.jfr..");
        ExportedApiRule.exportedSignaturesUseOnlyNameableTypes(ExportedApiRule.descriptorOf(ClusterRouter.class),
                        nameable)
                .check(new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                        .importPackagesOf(ClusterRouter.class));
    }
}
