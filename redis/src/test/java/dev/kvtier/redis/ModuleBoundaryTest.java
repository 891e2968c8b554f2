package dev.kvtier.redis;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.kvtier.ExportedApiRule;
import dev.kvtier.KvTierCache;
import org.junit.jupiter.api.Test;

import java.util.Set;
import java.util.TreeSet;

/** The redis module's side of the module boundary: its API names no Lettuce or Netty type. */
class ModuleBoundaryTest {

    @Test
    void exportedPackagesNameOnlyTypesTheirUsersCanName() {
        // dev.kvtier.redis requires dev.kvtier.core transitively (and core jdk.jfr): their exported types are
        // nameable by whoever reads this module. Lettuce's and Netty's are not (not required transitively).
        Set<String> nameable = new TreeSet<>(ExportedApiRule.unqualifiedExports(
                ExportedApiRule.descriptorOf(KvTierCache.class)));
        nameable.add("jdk.jfr..");
        ExportedApiRule.exportedSignaturesUseOnlyNameableTypes(
                        ExportedApiRule.descriptorOf(RedisRemoteBlockStore.class), nameable)
                .check(new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                        .importPackagesOf(RedisRemoteBlockStore.class));
    }
}
