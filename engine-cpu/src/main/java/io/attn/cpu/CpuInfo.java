package io.attn.cpu;

import io.attn.cpu.ops.Registers;
import io.attn.cpu.ops.Tuning;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import jdk.incubator.vector.FloatVector;

/**
 * The CPU a figure was measured on: {@code /proc/cpuinfo}'s model name, family and model, whether it has AVX2 and
 * AVX-512F, and the vector width the JVM uses here ({@link FloatVector#SPECIES_PREFERRED}: 256 bits on an AVX2 host, or
 * under {@code -XX:UseAVX=2} on an AVX-512 one, which is why the flags and the width are both printed). Every benchmark
 * prints it, so that no figure goes without the machine it came from. Immutable; {@link #host()} is read once.
 *
 * @param name the model name ({@code "?"} where unknown, e.g. not Linux)
 * @param family the CPU family, -1 where unknown
 * @param model the CPU model, -1 where unknown
 * @param avx2 whether the CPU reports AVX2
 * @param avx512f whether the CPU reports AVX-512F
 * @param vectorBits the JVM's preferred float vector width
 * @param cores the processors available to the JVM
 */
public record CpuInfo(String name, int family, int model, boolean avx2, boolean avx512f, int vectorBits, int cores) {

    private static final CpuInfo HOST = read(Path.of("/proc/cpuinfo"));

    /** This machine. */
    public static CpuInfo host() {
        return HOST;
    }

    /** Parsed from a {@code /proc/cpuinfo} file (its first processor); unknown fields where it cannot be read. */
    static CpuInfo read(Path cpuinfo) {
        int bits = FloatVector.SPECIES_PREFERRED.vectorBitSize(),
                cores = Runtime.getRuntime().availableProcessors();
        try {
            return parse(Files.readAllLines(cpuinfo), bits, cores);
        } catch (IOException | RuntimeException e) {
            return new CpuInfo(System.getProperty("os.arch", "?"), -1, -1, false, false, bits, cores);
        }
    }

    static CpuInfo parse(List<String> lines, int vectorBits, int cores) {
        String flags = " " + field(lines, "flags") + " ";
        return new CpuInfo(
                field(lines, "model name"),
                number(field(lines, "cpu family")),
                number(field(lines, "model")),
                flags.contains(" avx2 "),
                flags.contains(" avx512f "),
                vectorBits,
                cores);
    }

    /**
     * One line: {@code AMD EPYC (family 23 model 1, avx2, no avx512f; JVM vectors 256-bit; 2 cores)}.
     */
    public String describe() {
        return String.format(
                Locale.ROOT,
                "%s (family %d model %d, %s, %s; JVM vectors %d-bit; %d cores)",
                name,
                family,
                model,
                avx2 ? "avx2" : "no avx2",
                avx512f ? "avx512f" : "no avx512f",
                vectorBits,
                cores);
    }

    /** The kernels' tile set and GEMM blocking in this JVM and why ({@link Registers#describe}, {@link Tuning#describe}). */
    public static synchronized String kernels() {
        if (unusable != null) return unusable;
        try {
            return Registers.describe() + "; " + Tuning.describe();
        } catch (ExceptionInInitializerError e) { // a bad -Dattn.cpu.* property: every kernel fails, say why
            return unusable = "unusable: " + e.getCause().getMessage(); // later calls get NoClassDefFoundError
        } catch (NoClassDefFoundError e) {
            return "unusable: " + e.getMessage();
        }
    }

    /** Why the kernels cannot load, once known (the class's first initialization error says; later ones do not). */
    private static String unusable;

    private static int tiles() {
        try {
            return Registers.tiles();
        } catch (ExceptionInInitializerError | NoClassDefFoundError e) {
            return -1;
        }
    }

    /**
     * A JSON object with the same fields, {@code tiles} (the vector registers the kernels' tile set is sized for,
     * {@link Registers#tiles}), {@code gemm} (the GEMM blocking, {@link Tuning#json}) and {@code attention} (causal
     * attention's key tile, {@link Tuning#attentionJson}), for a benchmark's summary line.
     */
    public String json() {
        return String.format(
                Locale.ROOT,
                "{\"name\":\"%s\",\"family\":%d,\"model\":%d,\"avx2\":%b,\"avx512f\":%b,\"vector_bits\":%d,\"cores\":%d,"
                        + "\"tiles\":%d,\"gemm\":%s,\"attention\":%s}",
                name.replace("\\", "\\\\").replace("\"", "\\\""),
                family,
                model,
                avx2,
                avx512f,
                vectorBits,
                cores,
                tiles(),
                gemm(),
                attention());
    }

    private static String gemm() {
        try {
            return Tuning.json();
        } catch (ExceptionInInitializerError | NoClassDefFoundError e) {
            return "null";
        }
    }

    private static String attention() {
        try {
            return Tuning.attentionJson();
        } catch (ExceptionInInitializerError | NoClassDefFoundError e) {
            return "null";
        }
    }

    private static String field(List<String> lines, String key) {
        for (String l : lines) {
            if (l.isBlank()) break; // the first processor only
            int c = l.indexOf(':');
            if (c > 0 && l.substring(0, c).trim().equals(key))
                return l.substring(c + 1).trim();
        }
        return "?";
    }

    private static int number(String s) {
        try {
            return Integer.parseInt(s);
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
