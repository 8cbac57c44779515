package io.attn.text.bench;

import io.attn.engine.Engine;
import io.attn.engine.EngineOptions;
import io.attn.text.Embedder;
import io.attn.text.EmbedderOptions;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The heap one long text costs: a model folder (e.g. {@code tools/make_families.py --shape modernbert-base}) embeds one
 * text of {@code tokens} tokens (the texts of {@code mixed.txt} repeated, cut at that length), and this prints the
 * heap in use after a full GC before the call (the weights, packed copies included), the peak of the heap pools during
 * the call (live values and garbage not yet collected: an upper bound of what the call needs) and after it, and the
 * call's time. Run with a capped heap ({@code -Xmx}) to bound the peak from above as well. Not a test.
 *
 * <pre>
 * args: MODEL_DIR tokens [threads] [calls]
 * </pre>
 */
public final class LongTextMemory {
    private LongTextMemory() {}

    public static void main(String[] args) throws Exception {
        Path folder = Path.of(args[0]);
        int tokens = Integer.parseInt(args[1]);
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 2;
        int calls = args.length > 3 ? Integer.parseInt(args[3]) : 1;
        List<String> lines;
        try (var in = LongTextMemory.class.getClassLoader().getResourceAsStream("io/attn/text/mixed.txt")) {
            lines = new String(in.readAllBytes(), StandardCharsets.UTF_8)
                    .lines()
                    .toList();
        }
        StringBuilder text = new StringBuilder();
        while (text.length() < tokens * 8) for (String l : lines) text.append(l).append(' ');
        try (Engine engine =
                        Engine.open(EngineOptions.defaults().withDevice("cpu").withThreads(threads));
                Embedder e = Embedder.load(
                        engine,
                        folder,
                        EmbedderOptions.defaults().withMaxLength(tokens).withMaxBatchTokens(tokens))) {
            List<String> one = List.of(text.toString());
            long before = usedAfterGc();
            for (int c = 0; c < calls; c++) {
                for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) p.resetPeakUsage();
                long t0 = System.nanoTime();
                var r = e.embedWithUsage(one);
                double s = (System.nanoTime() - t0) / 1e9;
                long peak = 0;
                for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans())
                    if (p.getType() == MemoryType.HEAP) peak += p.getPeakUsage().getUsed();
                long after = usedAfterGc();
                System.out.printf(
                        Locale.ROOT,
                        "%s: %d tokens, call %d: %.1f s; heap after GC before the call %d MB, peak of the heap pools"
                                + " during it %d MB (+%d MB), after GC after it %d MB (+%d MB); max heap %d MB%n",
                        e.name(),
                        r.totalTokens(),
                        c,
                        s,
                        before >> 20,
                        peak >> 20,
                        (peak - before) >> 20,
                        after >> 20,
                        (after - before) >> 20,
                        Runtime.getRuntime().maxMemory() >> 20);
            }
        }
        System.exit(0);
    }

    private static long usedAfterGc() {
        for (int i = 0; i < 3; i++) System.gc();
        Runtime rt = Runtime.getRuntime();
        return rt.totalMemory() - rt.freeMemory();
    }
}
