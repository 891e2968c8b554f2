package dev.kvtier;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import dev.kvtier.prefix.PrefixBlockCache;
import dev.kvtier.store.Tier;
import org.junit.jupiter.api.Test;

import java.lang.module.ModuleDescriptor;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link ExportedApiRule} fails where it must, so ArchitectureTest's pass means something. */
class ExportedApiRuleTest {
    private final JavaClasses prefixView = new ClassFileImporter().importClasses(PrefixBlockCache.class, Tier.class);

    @Test
    void aPublicSignatureNamingATypeOfAPackageNotExportedFailsNamingMemberAndType() {
        // A module exporting dev.kvtier.prefix but not dev.kvtier.store: ensurePrefixResident(List, Tier) names Tier.
        ModuleDescriptor prefixOnly = ModuleDescriptor.newModule("fixture").exports("dev.kvtier.prefix").build();
        AssertionError failure = assertThrows(AssertionError.class, () ->
                ExportedApiRule.exportedSignaturesUseOnlyNameableTypes(prefixOnly, Set.of()).check(prefixView));
        assertTrue(failure.getMessage().contains("ensurePrefixResident")
                && failure.getMessage().contains("names dev.kvtier.store.Tier"), failure.getMessage());
    }

    @Test
    void aTypeOfAPackageDeclaredNameablePasses() {
        ModuleDescriptor prefixOnly = ModuleDescriptor.newModule("fixture").exports("dev.kvtier.prefix").build();
        ExportedApiRule.exportedSignaturesUseOnlyNameableTypes(prefixOnly, Set.of("dev.kvtier", "dev.kvtier.store"))
                .check(prefixView);
    }
}
