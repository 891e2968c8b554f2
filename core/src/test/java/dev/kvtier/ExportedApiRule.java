package dev.kvtier;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.JavaType;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;

import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;

/**
 * The module boundary as an ArchUnit rule, shared by the modules' {@code ArchitectureTest}s: every public or
 * protected signature of an accessible type in a package that a module exports to everyone (supertypes, fields,
 * method and constructor parameters, return types, type arguments, declared exceptions) names only types its users
 * can name too: the JDK's {@code java.*}, the packages the module itself exports, and the packages the caller lists
 * (those of modules it {@code requires transitive}, each with its reason). A type the API hands out but its users
 * cannot name (e.g. a public factory taking an internal engine) fails the rule, naming the member and the type.
 * The exported packages are read from the module's compiled descriptor, so the rule follows module-info.java.
 */
public final class ExportedApiRule {
    private ExportedApiRule() {
    }

    /** The compiled descriptor of the module (jar or class directory) that {@code member} was loaded from. */
    public static ModuleDescriptor descriptorOf(Class<?> member) {
        Path location;
        try {
            location = Path.of(member.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException("cannot locate the classes of " + member.getName(), e);
        }
        Set<ModuleReference> found = ModuleFinder.of(location).findAll();
        if (found.size() != 1 || found.iterator().next().descriptor().isAutomatic()) {
            throw new IllegalStateException(location + " holds no compiled module-info.class (found " + found
                    + "): build it with Maven (the module-descriptor profile), then run this test");
        }
        return found.iterator().next().descriptor();
    }

    /** The packages {@code module} exports to everyone (not its qualified exports). */
    public static Set<String> unqualifiedExports(ModuleDescriptor module) {
        return module.exports().stream().filter(e -> !e.isQualified()).map(ModuleDescriptor.Exports::source)
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /**
     * The rule for {@code module}: public signatures in its exported packages use only {@code java.*} types, types
     * of its exported packages and types of the {@code alsoNameable} packages (ArchUnit's notation: {@code "a.b"}
     * is that package, {@code "a.b.."} it and its subpackages).
     */
    public static ArchRule exportedSignaturesUseOnlyNameableTypes(ModuleDescriptor module, Set<String> alsoNameable) {
        Set<String> exported = unqualifiedExports(module);
        Set<String> prefixes = new TreeSet<>(List.of("java"));
        for (String name : alsoNameable) {
            if (name.endsWith("..")) {
                prefixes.add(name.substring(0, name.length() - 2));
            } else {
                exported.add(name);
            }
        }
        return classes().that(accessibleIn(exported))
                .should(useOnlyTypesOf(exported, prefixes))
                .as("the public signatures of " + module.name() + "'s exported packages " + exported
                        + " name only their own types and those of " + prefixes + " (and subpackages)");
    }

    private static DescribedPredicate<JavaClass> accessibleIn(Set<String> packages) {
        return new DescribedPredicate<>("are accessible types in " + packages) {
            @Override
            public boolean test(JavaClass type) {
                return packages.contains(type.getPackageName()) && accessible(type);
            }
        };
    }

    private static boolean accessible(JavaClass type) {
        for (JavaClass t = type; t != null; t = t.getEnclosingClass().orElse(null)) {
            if (!t.getModifiers().contains(JavaModifier.PUBLIC) || t.isAnonymousClass() || t.isLocalClass()) {
                return false;
            }
        }
        return true;
    }

    private static ArchCondition<JavaClass> useOnlyTypesOf(Set<String> exported, Set<String> prefixes) {
        return new ArchCondition<>("use only nameable types in public signatures") {
            @Override
            public void check(JavaClass type, ConditionEvents events) {
                List<String> violations = new ArrayList<>();
                type.getSuperclass().ifPresent(superclass -> checkTypes(type.getDescription() + " extends",
                        List.of(superclass), exported, prefixes, violations));
                checkTypes(type.getDescription() + " implements", type.getInterfaces(), exported, prefixes,
                        violations);
                checkTypes(type.getDescription() + " type parameters", type.getTypeParameters(), exported, prefixes,
                        violations);
                boolean extensible = !type.getModifiers().contains(JavaModifier.FINAL) && !type.isEnum()
                        && !type.isRecord();
                for (JavaField field : type.getFields()) {
                    if (visible(field, extensible)) {
                        checkTypes(field.getDescription(), List.of(field.getType()), exported, prefixes, violations);
                    }
                }
                for (JavaCodeUnit unit : type.getCodeUnits()) {
                    if (!visible(unit, extensible)
                            || unit.getModifiers().contains(JavaModifier.SYNTHETIC)
                            || unit.getModifiers().contains(JavaModifier.BRIDGE)) {
                        continue;
                    }
                    List<JavaType> used = new ArrayList<>(unit.getParameterTypes());
                    used.add(unit.getReturnType());
                    used.addAll(unit.getTypeParameters());
                    unit.getThrowsClause().getTypes().forEach(used::add);
                    checkTypes(unit.getDescription(), used, exported, prefixes, violations);
                }
                for (String violation : violations) {
                    events.add(SimpleConditionEvent.violated(type, violation));
                }
            }
        };
    }

    private static boolean visible(JavaMember member, boolean extensible) {
        return member.getModifiers().contains(JavaModifier.PUBLIC)
                || extensible && member.getModifiers().contains(JavaModifier.PROTECTED);
    }

    private static void checkTypes(String where, Collection<? extends JavaType> types, Set<String> exported,
                                   Set<String> prefixes, List<String> violations) {
        for (JavaType type : types) {
            for (JavaClass raw : type.getAllInvolvedRawTypes()) {
                JavaClass base = raw.getBaseComponentType();
                if (base.isPrimitive() || nameable(base.getPackageName(), exported, prefixes)) {
                    continue;
                }
                violations.add(where + " names " + base.getName() + ", which users of the module cannot name");
            }
        }
    }

    private static boolean nameable(String packageName, Set<String> exported, Set<String> prefixes) {
        if (exported.contains(packageName)) {
            return true;
        }
        for (String prefix : prefixes) {
            if (packageName.equals(prefix) || packageName.startsWith(prefix + ".")) {
                return true;
            }
        }
        return false;
    }
}
