package io.attn.cli;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.attn.engine.Engine;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/**
 * The CLI is a client of the library like any other: its classes depend only on the packages engine-core's {@code
 * module-info} exports to everyone (read from the compiled descriptor, so the rule follows the module), never on the
 * internal ones (the graph, the executor, the nn modules, the backend interface) nor on a backend's own classes
 * (engine-cpu, engine-cuda, kernels). A planted internal import makes this test fail with the class and the
 * dependency.
 */
class PublicApiOnlyTest {
    /** engine-core's module descriptor, from its jar or classes directory. */
    static ModuleDescriptor engineCore() throws Exception {
        URL where = Engine.class.getProtectionDomain().getCodeSource().getLocation();
        Path p = Path.of(where.toURI());
        if (Files.isDirectory(p))
            try (InputStream in = Files.newInputStream(p.resolve("module-info.class"))) {
                return ModuleDescriptor.read(in);
            }
        try (JarFile jar = new JarFile(p.toFile());
                InputStream in = jar.getInputStream(jar.getEntry("module-info.class"))) {
            return ModuleDescriptor.read(in);
        }
    }

    @Test
    void engineCoreExportsTheApiPackagesToEveryoneAndTheRestOnlyToTheEngine() throws Exception {
        ModuleDescriptor d = engineCore();
        assertEquals("io.attn.engine", d.name());
        Set<String> api = new TreeSet<>();
        for (ModuleDescriptor.Exports e : d.exports()) if (!e.isQualified()) api.add(e.source());
        assertEquals(Set.of("io.attn", "io.attn.engine", "io.attn.tensor", "io.attn.io"), api);
        for (ModuleDescriptor.Exports e : d.exports())
            if (e.isQualified())
                assertTrue(
                        Set.of("io.attn.cpu", "io.attn.cuda", "io.attn.reference", "io.attn.benchmarks")
                                .containsAll(e.targets()),
                        e.toString());
    }

    @Test
    void theCliDependsOnTheExportedPackagesOnly() throws Exception {
        ModuleDescriptor d = engineCore();
        // every package of engine-core's classes (the descriptor javac writes lists the exported ones only)
        Set<String> packages = new TreeSet<>();
        new ClassFileImporter()
                .importUrl(Engine.class.getProtectionDomain().getCodeSource().getLocation())
                .forEach(c -> packages.add(c.getPackageName()));
        List<String> internal = new ArrayList<>();
        for (String pkg : packages)
            if (d.exports().stream()
                    .noneMatch(e -> !e.isQualified() && e.source().equals(pkg))) internal.add(pkg);
        assertTrue(
                internal.containsAll(
                        List.of("io.attn.nn", "io.attn.graph", "io.attn.exec", "io.attn.backend", "io.attn.generate")),
                internal.toString());
        internal.addAll(List.of("io.attn.cpu..", "io.attn.cuda..", "io.attn.kernels.."));
        JavaClasses cli = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.attn.cli");
        assertTrue(cli.size() > 20, "imported " + cli.size() + " CLI classes");
        noClasses()
                .that()
                .resideInAPackage("io.attn.cli..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(internal.toArray(String[]::new))
                .because("the CLI uses the public library API (io.attn.engine) like any client")
                .check(cli);
    }

    @Test
    void theApiNamesNoInternalTypeInItsSignatures() throws Exception {
        // a public method of an exported package that takes or returns an internal type cannot be used from the module
        // path (AttnModel.config() once returned io.attn.nn.ModelConfig)
        ModuleDescriptor d = engineCore();
        Set<String> api = new TreeSet<>();
        for (ModuleDescriptor.Exports e : d.exports()) if (!e.isQualified()) api.add(e.source());
        JavaClasses core = new ClassFileImporter()
                .importUrl(Engine.class.getProtectionDomain().getCodeSource().getLocation());
        List<String> leaks = new ArrayList<>();
        for (JavaClass c : core) {
            if (!api.contains(c.getPackageName()) || !c.getModifiers().contains(JavaModifier.PUBLIC)) continue;
            if (c.getEnclosingClass().isPresent()
                    && !c.getEnclosingClass().get().getModifiers().contains(JavaModifier.PUBLIC)) continue;
            for (JavaCodeUnit u : c.getCodeUnits()) {
                if (!u.getModifiers().contains(JavaModifier.PUBLIC)) continue;
                List<JavaClass> types = new ArrayList<>(u.getRawParameterTypes());
                types.add(u.getRawReturnType());
                for (JavaClass t : types) {
                    JavaClass base = t.isArray() ? t.getBaseComponentType() : t;
                    String pkg = base.getPackageName();
                    if (pkg.startsWith("io.attn") && !api.contains(pkg)) leaks.add(u.getFullName() + " names " + base);
                }
            }
        }
        assertEquals(List.of(), leaks);
    }
}
