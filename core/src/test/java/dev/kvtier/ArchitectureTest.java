package dev.kvtier;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import dev.kvtier.cuda.CudaRuntime;
import dev.kvtier.exec.StorageKind;
import dev.kvtier.observe.RecoveryEvent;
import dev.kvtier.persist.SegmentRecord;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Set;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The rules that keep the rooms apart (README, Architecture; shared/DESIGN.md), checked on the
 * compiled main classes. Each rule fails on the first class that breaks it, naming the dependency;
 * a rule that matches no class fails too, so a renamed package cannot make one pass vacuously.
 */
class ArchitectureTest {
    private static final String STORE = "dev.kvtier.store";
    private static final String POLICIES = "dev.kvtier.store.policy";
    private static JavaClasses classes;

    @BeforeAll
    static void importMainClasses() {
        classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                // The bindings module is checked by its own tests; its raw layer and loader know each other by
                // design (cudart_h resolves symbols in the library the loader chose), so core is imported alone.
                .withImportOption(location -> !location.contains("/dev/kvtier/cuda/"))
                .importPackages("dev.kvtier");
    }

    @Test
    void noPackageCycles() {
        // Every package below dev.kvtier is its own slice (exec, exec.host, exec.cuda, tiering, store, ...).
        // The door (dev.kvtier itself) and its machinery (tiering) are one layer: tiering throws the
        // door's exceptions and reads its config, so the root package is left out of the slices.
        // The store and its policies know each other by design: the policies implement the store's SPI, and the store
        // reaches them at the seams theStoreReachesItsPoliciesOnlyAtTheirSeams checks, so that direction is left out.
        slices().matching("dev.kvtier.(**)").should().beFreeOfCycles()
                .ignoreDependency(resideInAPackage(STORE), resideInAPackage(POLICIES))
                .check(classes);
    }

    @Test
    void theStoreReachesItsPoliciesOnlyAtTheirSeams() {
        // DemotionPolicy's factories hand out the built-in policies; the store's entry is a tracker's node (one object
        // per segment, so a touch changes one object); candidates are named as entries, not keys; the entry table
        // shares its probing steps with the policies' simulations. Nothing else of the store names a policy class.
        Map<String, Set<String>> seams = Map.of(
                "S3FifoPolicy", Set.of("DemotionPolicy"), "WTinyLfuPolicy", Set.of("DemotionPolicy"),
                "LruKPolicy", Set.of("DemotionPolicy"), "ArcPolicy", Set.of("DemotionPolicy"),
                "FrequencyExpertPolicy", Set.of("DemotionPolicy"),
                "PolicyNode", Set.of("SegmentEntry"),
                "CandidateList", Set.of("TieredStore", "SortedTierIndex", "UsageBucketIndex"),
                "OpenAddressing", Set.of("EntryTable"));
        ArchCondition<JavaClass> usedByTheStoreOnlyAtItsSeam = new ArchCondition<>("be named in " + STORE
                + " only at the seams " + seams) {
            @Override
            public void check(JavaClass policyClass, ConditionEvents events) {
                Set<String> allowed = seams.getOrDefault(topLevelSimpleName(policyClass), Set.of());
                for (Dependency dependency : policyClass.getDirectDependenciesToSelf()) {
                    JavaClass origin = dependency.getOriginClass();
                    if (origin.getPackageName().equals(STORE) && !allowed.contains(topLevelSimpleName(origin))) {
                        events.add(SimpleConditionEvent.violated(dependency, dependency.getDescription()));
                    }
                }
            }
        };
        classes().that().resideInAPackage(POLICIES).should(usedByTheStoreOnlyAtItsSeam).check(classes);
        // The policy package is not exported: outside the store, only DemotionPolicy names a policy.
        noClasses().that().resideOutsideOfPackages(STORE, POLICIES)
                .should().dependOnClassesThat().resideInAPackage(POLICIES)
                .check(classes);
    }

    private static String topLevelSimpleName(JavaClass javaClass) {
        String name = javaClass.getName();
        int nested = name.indexOf('$');
        String topLevel = nested < 0 ? name : name.substring(0, nested);
        return topLevel.substring(topLevel.lastIndexOf('.') + 1);
    }

    @Test
    void theDoorValidatesAndEntersNothingBelowImportsIt() {
        // The metrics binder is not below the door but a client of it, like any application.
        noClasses().that().resideInAnyPackage("dev.kvtier.(*)..")
                .and().resideOutsideOfPackage("dev.kvtier.observe.micrometer..")
                .should().dependOnClassesThat().belongToAnyOf(KvTierCache.class)
                .check(classes);
    }

    @Test
    void aMoveNeverEvicts() {
        ArchRule rule = noClasses().that().haveNameMatching("dev\\.kvtier\\.tiering\\.Mover(\\$.*)?")
                .should().dependOnClassesThat().haveNameMatching("dev\\.kvtier\\.tiering\\.RoomMaker(\\$.*)?");
        rule.check(classes);
    }

    @Test
    void recoveryHasOneHome() {
        // Tiering writes the journal's records in PersistedDisk; only DiskRecovery reads them back and reports it.
        noClasses().that().resideInAPackage("dev.kvtier.tiering")
                .and().doNotHaveSimpleName("DiskRecovery").and().doNotHaveSimpleName("PersistedDisk")
                .should().dependOnClassesThat().belongToAnyOf(SegmentRecord.class, RecoveryEvent.class)
                .check(classes);
    }

    @Test
    void execNamesNoTierAndKnowsNoPolicy() {
        noClasses().that().resideInAPackage("dev.kvtier.exec..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.kvtier", "dev.kvtier.store..",
                        "dev.kvtier.sync..", "dev.kvtier.tiering..")
                .check(classes);
    }

    @Test
    void theHostBackendDoesNotNeedCuda() {
        noClasses().that().resideInAPackage("dev.kvtier.exec.host..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.kvtier.exec.cuda..", "dev.kvtier.cuda..")
                .check(classes);
    }

    @Test
    void storeAndSyncKnowNoBytes() {
        noClasses().that().resideInAnyPackage("dev.kvtier.store..", "dev.kvtier.sync..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.kvtier", "dev.kvtier.exec..",
                        "dev.kvtier.cuda..", "dev.kvtier.tiering..", "java.lang.foreign..")
                .check(classes);
    }

    @Test
    void onlyTheMetricsBinderKnowsMicrometer() {
        // Micrometer is an optional dependency: a class outside dev.kvtier.observe.micrometer that names it
        // would fail to load without it (MicrometerAbsentTest proves the cache runs without it).
        noClasses().that().resideOutsideOfPackage("dev.kvtier.observe.micrometer..")
                .should().dependOnClassesThat().resideInAPackage("io.micrometer..")
                .check(classes);
        noClasses().that().resideOutsideOfPackage("dev.kvtier.observe.micrometer..")
                .should().dependOnClassesThat().resideInAPackage("dev.kvtier.observe.micrometer..")
                .check(classes);
    }

    @Test
    void exportedPackagesNameOnlyTypesTheirUsersCanName() {
        // jdk.jfr is required transitively (KvTierFlightRecording hands out a Recording). Micrometer's types appear
        // only in dev.kvtier.observe.micrometer, whose users require micrometer.core themselves (optional dependency).
        ExportedApiRule.exportedSignaturesUseOnlyNameableTypes(ExportedApiRule.descriptorOf(KvTierCache.class),
                Set.of("jdk.jfr..", "io.micrometer..")).check(classes);
    }

    @Test
    void bindingsExportedPackagesNameOnlyTypesTheirUsersCanName() {
        JavaClasses bindings = new ClassFileImporter().importPackagesOf(CudaRuntime.class);
        ExportedApiRule.exportedSignaturesUseOnlyNameableTypes(ExportedApiRule.descriptorOf(CudaRuntime.class),
                Set.of()).check(bindings);
    }

    @Test
    void oneBridgeMapsTiersToStorage() {
        noClasses().that().resideInAPackage("dev.kvtier.tiering").and().doNotHaveSimpleName("TierMemories")
                .should().dependOnClassesThat().belongToAnyOf(StorageKind.class)
                .check(classes);
    }
}
