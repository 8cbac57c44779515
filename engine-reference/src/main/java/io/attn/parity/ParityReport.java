package io.attn.parity;

import java.util.List;
import java.util.Locale;

/** Formats parity results as a plain-text table for the {@code attn parity} command. */
public final class ParityReport {
    private ParityReport() {}

    /**
     * A table (case, shape, backend, max abs error, relative error, bound, pass), then failure details and a total. A
     * case whose node the backend declared unsupported shows SKIP and is counted apart, neither passed nor failed.
     */
    public static String format(List<ParityResult> results) {
        int wCase = "case".length(), wShape = "shape".length(), wBackend = "backend".length();
        for (ParityResult r : results) {
            wCase = Math.max(wCase, r.parityCase().name().length());
            wShape = Math.max(wShape, r.shape().length());
            wBackend = Math.max(wBackend, r.backend().length());
        }
        String row = "%-" + wCase + "s  %-" + wShape + "s  %-" + wBackend + "s  %12s  %12s  %10s  %s%n";
        StringBuilder sb = new StringBuilder();
        sb.append(
                String.format(Locale.ROOT, row, "case", "shape", "backend", "max abs err", "rel err", "bound", "pass"));
        int passed = 0, skipped = 0;
        for (ParityResult r : results) {
            if (r.pass()) passed++;
            else if (r.unsupported()) skipped++;
            sb.append(String.format(
                    Locale.ROOT,
                    row,
                    r.parityCase().name(),
                    r.shape(),
                    r.backend(),
                    ParityHarness.fmt(r.maxAbsErr()),
                    ParityHarness.fmt(r.relErr()),
                    ParityHarness.fmt(r.parityCase().bound()),
                    r.pass() ? "PASS" : r.unsupported() ? "SKIP" : "FAIL"));
        }
        for (ParityResult r : results)
            if (!r.pass() && !r.unsupported())
                sb.append("FAIL ")
                        .append(r.parityCase().name())
                        .append(" on ")
                        .append(r.backend())
                        .append(": ")
                        .append(r.message())
                        .append('\n');
        sb.append(passed).append(" of ").append(results.size()).append(" passed");
        if (skipped > 0) sb.append(", ").append(skipped).append(" skipped (not supported by the backend)");
        if (passed + skipped < results.size())
            sb.append(", ").append(results.size() - passed - skipped).append(" FAILED");
        return sb.append('\n').toString();
    }
}
