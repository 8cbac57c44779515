package io.attn.cli;

import java.nio.file.Path;

/** Progress of a batch of files: a redrawn bar on a terminal, plain lines otherwise; a summary at the end. */
final class Progress {
    private final int total;
    private final boolean tty = System.console() != null && System.console().isTerminal();
    private int done;

    Progress(int total) {
        this.total = total;
    }

    void ok(Path f) {
        done++;
        if (tty) bar(f);
        else System.err.println("attn: [" + done + "/" + total + "] ok " + f);
    }

    void failed(Path f, String why) {
        done++;
        if (tty) System.err.print("\r\033[K");
        System.err.println("attn: [" + done + "/" + total + "] FAILED " + why);
        if (tty) bar(f);
    }

    private void bar(Path f) {
        int w = 30, filled = total == 0 ? w : done * w / total;
        System.err.print("\r\033[K[" + "#".repeat(filled) + " ".repeat(w - filled) + "] " + done + "/" + total + " "
                + f.getFileName());
    }

    void done(int failed) {
        if (tty) System.err.println();
        System.err.println("attn: " + (total - failed) + " of " + total + " files done, " + failed + " failed");
    }
}
