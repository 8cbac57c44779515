package io.attn.cli;

import java.nio.file.Path;
import java.util.Locale;

/**
 * Progress of {@code attn embed} on stderr: a redrawn bar (texts done / total, texts per second, ETA) when stderr is a
 * terminal, nothing but the final summary line otherwise.
 */
final class EmbedProgress {
    private final long total;
    private final boolean tty = enabled();
    private final long start = System.nanoTime();
    private long lastDraw;

    EmbedProgress(long total) {
        this.total = total;
    }

    static boolean enabled() {
        return Terminal.stderr();
    }

    void update(long done) {
        if (!tty) return;
        long now = System.nanoTime();
        if (now - lastDraw < 200_000_000L && done != total) return;
        lastDraw = now;
        double s = (now - start) / 1e9, rate = done / Math.max(s, 1e-9);
        StringBuilder b = new StringBuilder("\r\033[K");
        if (total > 0) {
            int w = 30, filled = (int) Math.min(w, done * w / total);
            b.append('[')
                    .append("#".repeat(filled))
                    .append(" ".repeat(w - filled))
                    .append("] ");
            b.append(done).append('/').append(total);
            b.append(String.format(
                    Locale.ROOT, ", %.0f texts/s, ETA %s", rate, time((total - done) / Math.max(rate, 1e-9))));
        } else b.append(done).append(String.format(Locale.ROOT, " texts, %.0f texts/s", rate));
        System.err.print(b);
    }

    void clear() {
        if (tty) System.err.print("\r\033[K");
    }

    void finish(long rows, long tokens, long cut, int maxLength, Path output) {
        clear();
        double s = (System.nanoTime() - start) / 1e9;
        System.err.printf(
                Locale.ROOT,
                "attn: %d texts (%d tokens) in %.1f s, %.1f texts/s, %.0f tokens/s -> %s%s%n",
                rows,
                tokens,
                s,
                rows / Math.max(s, 1e-9),
                tokens / Math.max(s, 1e-9),
                output,
                cut == 0 ? "" : "; " + cut + " texts were cut at " + maxLength + " tokens");
    }

    private static String time(double seconds) {
        long t = Math.round(seconds);
        return t >= 3600
                ? String.format(Locale.ROOT, "%dh%02dm", t / 3600, t / 60 % 60)
                : String.format(Locale.ROOT, "%dm%02ds", t / 60, t % 60);
    }
}
