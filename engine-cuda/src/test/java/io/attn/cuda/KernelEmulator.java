package io.attn.cuda;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.attn.kernels.Kernel;
import io.attn.kernels.Kernels;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The engine's {@code .cu} kernels compiled for the host with g++ and {@code src/test/emu/cuda_emu.h} (one fiber
 * per CUDA thread; a grid's blocks shared out to {@code EMU_THREADS} OS threads, default 2), callable by {@link Kernel} handle with the same argument list a GPU launch gets. For each kernel file
 * a translation unit includes the {@code .cu} in a namespace and adds {@code emu_<entry>(const long long* args, gx,
 * gy, gz, block, smem)}, generated from the PTX parameter types ({@link Kernels#params}), so the emulator and the GPU see
 * the same signatures. {@code ATTN_HOST_EMU} is defined, so the tensor-core file calls the emulator's warp-collective
 * {@code mma.sync} stand-in instead of its inline PTX. Built once per content hash (cached in {@code java.io.tmpdir});
 * {@link #get} says why not when g++ is missing.
 */
@SuppressWarnings("restricted")
final class KernelEmulator {
    // relative to the module that runs the tests: engine-cuda, or a sibling (the tests module's parity suite)
    static final Path CU = Path.of("../kernels/src/main/cuda"),
            EMU =
                    Files.isDirectory(Path.of("src/test/emu"))
                            ? Path.of("src/test/emu")
                            : Path.of("../engine-cuda/src/test/emu");
    private static KernelEmulator instance;
    private static String failure;

    private final Map<Kernel, MethodHandle> entries = new EnumMap<>(Kernel.class);
    private final Path library;

    /** The emulator, or null with {@link #failure()} saying why (no g++, compile error). */
    static synchronized KernelEmulator get() {
        if (instance == null && failure == null) {
            try {
                instance = new KernelEmulator();
            } catch (Exception e) {
                failure = e.toString();
            }
        }
        return instance;
    }

    static synchronized String failure() {
        return failure;
    }

    private KernelEmulator() throws IOException, InterruptedException {
        // the library is cached in java.io.tmpdir under the hash of everything that goes into it (compiler flags,
        // generated translation units, the emulator's and the kernels' sources): each test JVM (engine-cuda's, the
        // parity suite's) and each CI run on the same machine compiles only what changed
        List<String> flags = List.of("-std=c++20", "-O2", "-fPIC", "-shared", "-pthread", "-w", "-DATTN_HOST_EMU");
        Map<String, String> tus = new java.util.TreeMap<>();
        for (String file : Kernels.NAMES) tus.put("k_" + file + ".cpp", translationUnit(file));
        java.security.MessageDigest md;
        try {
            md = java.security.MessageDigest.getInstance("SHA-256");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        md.update(String.join(" ", flags).getBytes(StandardCharsets.UTF_8));
        for (var e : tus.entrySet()) md.update((e.getKey() + "\0" + e.getValue()).getBytes(StandardCharsets.UTF_8));
        for (Path d : List.of(EMU, CU))
            try (var files = Files.list(d)) {
                for (Path f : files.sorted().toList()) {
                    md.update(f.getFileName().toString().getBytes(StandardCharsets.UTF_8));
                    md.update(Files.readAllBytes(f));
                }
            }
        String hash = java.util.HexFormat.of().formatHex(md.digest()).substring(0, 16);
        Path cached = Path.of(System.getProperty("java.io.tmpdir"), "attn-emu-" + hash, "libattn_emu.so");
        if (!Files.isRegularFile(cached)) {
            Path dir = Files.createTempDirectory("attn-emu");
            List<String> cmd = new ArrayList<>(List.of("g++"));
            cmd.addAll(flags);
            cmd.addAll(List.of(
                    "-I",
                    EMU.toAbsolutePath().normalize().toString(),
                    "-o",
                    dir.resolve("libattn_emu.so").toString(),
                    EMU.resolve("emu.cpp").toAbsolutePath().normalize().toString()));
            for (var e : tus.entrySet()) {
                Path tu = dir.resolve(e.getKey());
                Files.writeString(tu, e.getValue());
                cmd.add(tu.toString());
            }
            Process p;
            try {
                p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            } catch (IOException e) {
                throw new IOException("g++ not available: " + e.getMessage(), e);
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(300, TimeUnit.SECONDS) || p.exitValue() != 0)
                throw new IOException("compiling the kernel emulator failed:\n" + out);
            // published whole or not at all: a concurrent JVM either finds the finished file or compiles its own
            Files.createDirectories(cached.getParent());
            Path part = Files.createTempFile(cached.getParent(), "lib", ".part");
            Files.copy(dir.resolve("libattn_emu.so"), part, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            Files.move(part, cached, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            try (var files = Files.list(dir)) {
                for (Path f : files.toList()) Files.delete(f);
            }
            Files.delete(dir);
        }
        library = cached;
        SymbolLookup lib = SymbolLookup.libraryLookup(library, Arena.global());
        FunctionDescriptor fd = FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT);
        for (Kernel k : Kernel.values())
            entries.put(
                    k,
                    Linker.nativeLinker()
                            .downcallHandle(lib.find("emu_" + k.entry()).orElseThrow(), fd));
    }

    private static String translationUnit(String file) {
        StringBuilder sb = new StringBuilder("#include \"cuda_emu.h\"\nnamespace k_" + file + " {\n#include \""
                + CU.resolve(file + ".cu").toAbsolutePath().normalize() + "\"\n}\n");
        for (Kernel k : Kernel.in(file)) {
            String entry = k.entry();
            List<String> types = Kernels.params(k);
            List<String> args = new ArrayList<>();
            for (int i = 0; i < types.size(); i++)
                args.add(
                        switch (types.get(i)) {
                            case "u64" -> "emu_u64{a[" + i + "]}";
                            case "u32" -> "(int)a[" + i + "]";
                            case "f32" -> "emu_f32(a[" + i + "])";
                            default -> throw new IllegalStateException("PTX type " + types.get(i));
                        });
            sb.append("extern \"C\" void emu_")
                    .append(entry)
                    .append(
                            "(const long long *a, int gx, int gy, int gz, int bx, int smem) {\n  emu_run(gx, gy, gz, bx, smem, [a] { k_")
                    .append(file)
                    .append("::")
                    .append(entry)
                    .append('(')
                    .append(String.join(", ", args))
                    .append("); });\n}\n");
        }
        return sb.toString();
    }

    /** The shared library holding {@code emu_<entry>} for every kernel entry point. */
    Path library() {
        return library;
    }

    /** Runs {@code kernel} on the host: values as {@link KernelArgs#values()} (pointers are host addresses). */
    void launch(Kernel kernel, int gx, int gy, int gz, int threads, List<Number> values) {
        launch(kernel, gx, gy, gz, threads, 0, values);
    }

    /**
     * The same with {@code smem} bytes of dynamic shared memory per block: the emulator allocates them for each block
     * (what the kernel's {@code extern __shared__} array names; garbage-filled) and aborts on an access past them.
     */
    void launch(Kernel kernel, int gx, int gy, int gz, int threads, int smem, List<Number> values) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment args = a.allocate(JAVA_LONG, Math.max(1, values.size()));
            for (int i = 0; i < values.size(); i++) {
                Number v = values.get(i);
                long bits = v instanceof Float f ? Float.floatToRawIntBits(f) : v.longValue();
                args.setAtIndex(JAVA_LONG, i, bits);
            }
            entries.get(kernel).invokeExact(args, gx, gy, gz, threads, smem);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
