package io.attn.cli;

import java.nio.file.Path;
import java.util.Locale;
import java.util.Timer;
import java.util.TimerTask;
import java.util.function.DoubleConsumer;

/**
 * Progress of {@code attn run} on stderr. On a terminal: a bar redrawn in place that moves with the files done and,
 * within a file, with the ops of its forward pass (the engine's progress listener, weighted by each op's work), and
 * the elapsed time, which keeps counting (twice a second) through one long op; a failed file gets a line of its own.
 * Not on a terminal: a plain line per file of a batch. A batch ends with a summary line either way; a single file
 * leaves nothing behind.
 *
 * <p>Thread-safe: the ticking timer and the listener draw under one lock.
 */
final class Progress {
    /** Least time between two draws of the bar as the ops run (ProgressTest sets 0: every op draws). */
    static volatile long minDrawNanos = 100_000_000L;

    private final int total;
    private final boolean batch;
    private final boolean tty = Terminal.stderr();
    private final long start = System.nanoTime();
    private final Timer ticker;
    private int done;
    private double fraction;
    private Path current;
    private long lastDraw;

    /** Progress over {@code total} files; {@code batch}: the input named a directory or glob. */
    Progress(int total, boolean batch) {
        this.total = total;
        this.batch = batch;
        ticker = tty ? new Timer("attn-progress", true) : null;
        if (ticker != null)
            ticker.scheduleAtFixedRate(
                    new TimerTask() {
                        @Override
                        public void run() {
                            tick();
                        }
                    },
                    500,
                    500);
    }

    /** The listener for the forward pass of {@code f} (null when nothing is drawn). */
    DoubleConsumer within(Path f) {
        if (!tty) return null;
        synchronized (this) {
            current = f;
            fraction = 0;
        }
        return this::advance;
    }

    private synchronized void advance(double f) {
        fraction = Math.min(Math.max(f, 0), 1);
        long now = System.nanoTime();
        if (now - lastDraw >= minDrawNanos || fraction == 1) draw(now);
    }

    private synchronized void tick() {
        draw(System.nanoTime());
    }

    synchronized void ok(Path f) {
        done++;
        fraction = 0;
        if (tty) draw(System.nanoTime());
        else if (batch) System.err.println("attn: [" + done + "/" + total + "] ok " + f);
    }

    synchronized void failed(Path f, String why) {
        done++;
        fraction = 0;
        if (tty) System.err.print("\r\033[K");
        System.err.println("attn: [" + done + "/" + total + "] FAILED " + why);
        if (tty) draw(System.nanoTime());
    }

    /** {@code text} on a line of its own: the bar, when drawn, is cleared first and drawn again below it. */
    synchronized void line(String text) {
        if (tty) System.err.print("\r\033[K");
        System.err.println(text);
        if (tty && lastDraw != 0) draw(System.nanoTime());
    }

    /** Clears the bar (and stops its timer); a batch prints its summary. */
    synchronized void done(int failed) {
        if (ticker != null) ticker.cancel();
        if (tty) System.err.print("\r\033[K");
        if (batch)
            System.err.println("attn: " + (total - failed) + " of " + total + " files done, " + failed + " failed");
        System.err.flush();
    }

    private void draw(long now) {
        lastDraw = now;
        double all = (done + fraction) / Math.max(total, 1);
        int w = 30, filled = (int) Math.min(w, Math.round(all * w));
        StringBuilder b = new StringBuilder("\r\033[K[")
                .append("#".repeat(filled))
                .append(" ".repeat(w - filled))
                .append(String.format(Locale.ROOT, "] %3.0f%%", 100 * all));
        if (batch) b.append(' ').append(done).append('/').append(total);
        b.append(String.format(Locale.ROOT, ", %.1f s", (now - start) / 1e9));
        if (batch && current != null) b.append(' ').append(current.getFileName());
        System.err.print(b);
        System.err.flush();
    }
}
