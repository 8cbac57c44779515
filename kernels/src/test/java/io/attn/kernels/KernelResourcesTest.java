package io.attn.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The attention kernels' resources as ptxas reports them ({@code ptxas -v} on the committed PTX, for sm_80 and
 * sm_90): no entry of {@code flash_attention_fa2} may spill registers (every one is compiled with up to 255 registers
 * a thread), and the older attention files may spill only where docs/performance-gpu.md ("Kernel resources") already
 * says they do. Prints the table that section shows. Skipped without ptxas.
 */
class KernelResourcesTest {
    /** The attention kernel files. */
    static final List<String> FILES =
            List.of("attention", "flash_attention", "flash_attention_bf16", "flash_attention_fa2");

    /** Spills measured before the FA2 kernels, documented (entry@arch); nothing else may spill. */
    static final Set<String> KNOWN_SPILLS =
            Set.of("flash_f32_d64@sm_80", "flash_f32_d64@sm_90", "flash_bf16_d128@sm_90", "flash_f16_d128@sm_90");

    record Usage(int registers, int spillStores, int spillLoads, int smem) {}

    private static final Pattern ENTRY = Pattern.compile("Compiling entry function '(\\w+)' for '(sm_\\d+)'"),
            SPILL = Pattern.compile("(\\d+) bytes spill stores, (\\d+) bytes spill loads"),
            REGS = Pattern.compile("Used (\\d+) registers(?:.*?(\\d+) bytes smem)?");

    /** ptxas -v's report for every entry of {@code file}.ptx on {@code arch}: entry -> usage. */
    static Map<String, Usage> usage(Path ptxas, String file, String arch) throws Exception {
        Process p = new ProcessBuilder(ptxas.toString(), "-v", "-arch=" + arch, file + ".ptx", "-o", "/dev/null")
                .directory(PtxArtifactsTest.PTX.toFile())
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(300, TimeUnit.SECONDS), "ptxas timed out");
        assertEquals(0, p.exitValue(), "ptxas -v " + file + ".ptx failed:\n" + out);
        Map<String, Usage> res = new LinkedHashMap<>();
        String entry = null;
        int stores = -1, loads = -1;
        for (String line : out.split("\n")) {
            Matcher m = ENTRY.matcher(line);
            if (m.find()) {
                entry = m.group(1);
                stores = loads = -1;
                continue;
            }
            m = SPILL.matcher(line);
            if (m.find() && entry != null) {
                stores = Integer.parseInt(m.group(1));
                loads = Integer.parseInt(m.group(2));
                continue;
            }
            m = REGS.matcher(line);
            if (m.find() && entry != null) {
                int smem = m.group(2) == null ? 0 : Integer.parseInt(m.group(2));
                res.put(entry, new Usage(Integer.parseInt(m.group(1)), stores, loads, smem));
                entry = null;
            }
        }
        return res;
    }

    @Test
    void attentionKernelsDoNotSpill() throws Exception {
        Path ptxas = PtxArtifactsTest.tool("ptxas").orElse(null);
        Assumptions.assumeTrue(ptxas != null, "ptxas not found (PATH, CUDA_HOME, /usr/local/cuda/bin): skipped");
        List<String> bad = new ArrayList<>();
        StringBuilder table = new StringBuilder("| entry | arch | registers | spill stores / loads | static smem |\n");
        for (String file : FILES)
            for (String arch : List.of("sm_80", "sm_90")) {
                Map<String, Usage> u = usage(ptxas, file, arch);
                for (Kernel k : Kernel.in(file)) {
                    Usage x = u.get(k.entry());
                    assertTrue(x != null && x.spillStores() >= 0, "ptxas -v reports nothing for " + k.entry());
                    table.append("| ")
                            .append(k.entry())
                            .append(" | ")
                            .append(arch)
                            .append(" | ")
                            .append(x.registers())
                            .append(" | ")
                            .append(x.spillStores())
                            .append(" / ")
                            .append(x.spillLoads())
                            .append(" | ")
                            .append(x.smem())
                            .append(" |\n");
                    boolean spills = x.spillStores() > 0 || x.spillLoads() > 0;
                    if (spills && !KNOWN_SPILLS.contains(k.entry() + "@" + arch))
                        bad.add(k.entry() + " on " + arch + ": " + x);
                    if (x.registers() > 255) bad.add(k.entry() + " on " + arch + ": " + x.registers() + " registers");
                }
            }
        System.out.print(table);
        assertTrue(bad.isEmpty(), "register spills (or too many registers):\n" + String.join("\n", bad) + "\n" + table);
    }
}
