package io.attn.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The CPU a figure was measured on, from {@code /proc/cpuinfo}: model name, family/model, AVX2 / AVX-512. */
final class CpuInfo {
    private CpuInfo() {}

    static String describe() {
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc/cpuinfo"));
            String name = field(lines, "model name"),
                    family = field(lines, "cpu family"),
                    model = field(lines, "model");
            String flags = " " + field(lines, "flags") + " ";
            String isa = flags.contains(" avx512f ") ? "AVX-512" : flags.contains(" avx2 ") ? "AVX2" : "no AVX2";
            return name + " (family " + family + " model " + model + ", " + isa + ", "
                    + Runtime.getRuntime().availableProcessors() + " cores)";
        } catch (IOException | RuntimeException e) {
            return System.getProperty("os.arch") + " (" + Runtime.getRuntime().availableProcessors() + " cores)";
        }
    }

    private static String field(List<String> lines, String key) {
        for (String l : lines) {
            int c = l.indexOf(':');
            if (c > 0 && l.substring(0, c).trim().equals(key))
                return l.substring(c + 1).trim();
        }
        return "?";
    }
}
