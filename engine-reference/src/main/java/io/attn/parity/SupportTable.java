package io.attn.parity;

import io.attn.backend.BackendProvider;
import io.attn.backend.Backends;
import io.attn.backend.OpSupport;
import io.attn.graph.Op;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The op x backend support table ({@code attn parity --support}; its markdown form is {@code docs/ops.md}), as ggml's
 * {@code docs/ops.md}: every {@link Op} against each backend that declares what it computes ({@link
 * BackendProvider#support}, the rule its {@code supports(node)} follows), that declaration asked about every parity case
 * of the op ({@link ParityCases#of}). It is generated from the code (the op enum, the declarations, the cases) and needs
 * no device. A cell is {@code yes} (every case), {@code partial} (some: a note gives the backend's reason for the
 * others), {@code no} (none, with the reason), or {@code leaf} for INPUT and CONSTANT, which are values, never computed.
 */
public final class SupportTable {
    private SupportTable() {}

    /** The command that writes {@code docs/ops.md}, named in its header. */
    public static final String COMMAND = "attn parity --support --markdown";

    /**
     * The table for the providers on the class path that declare their support, those named {@code device} only
     * unless it is {@code all}; a backend attn has (cpu, cuda) whose provider is not on the class path is named below.
     */
    public static String format(String device, boolean markdown) {
        List<BackendProvider> providers = new ArrayList<>();
        Set<String> present = new TreeSet<>();
        for (BackendProvider p : Backends.providers()) {
            present.add(p.name());
            if (device.equals("all") || device.equals(p.name())) providers.add(p);
        }
        List<String> absent = new ArrayList<>();
        for (String name : new TreeSet<>(Backends.ARTIFACTS.keySet()))
            if ((device.equals("all") || device.equals(name)) && !present.contains(name))
                absent.add(name + " (" + Backends.ARTIFACTS.get(name) + ")");
        return format(providers, absent, markdown);
    }

    /**
     * The table for {@code providers} (lowest rank first: the CPU, then accelerators), those without a declaration
     * left out; {@code absent}: backends to name as not on the class path.
     */
    static String format(List<BackendProvider> providers, List<String> absent, boolean markdown) {
        List<String> names = new ArrayList<>();
        List<OpSupport> declared = new ArrayList<>();
        List<String> unreadable = new ArrayList<>();
        List<BackendProvider> sorted = new ArrayList<>(providers);
        sorted.sort(Comparator.comparingInt(BackendProvider::rank).thenComparing(BackendProvider::name));
        for (BackendProvider p : sorted) {
            OpSupport s;
            try {
                s = p.support();
            } catch (RuntimeException | LinkageError e) { // its classes cannot load here: say so, never crash
                unreadable.add(p.name() + " (" + e + ")");
                continue;
            }
            if (s == null) continue; // no declaration: left out
            names.add(p.name());
            declared.add(s);
        }
        Map<Op, List<ParityCase>> cases = new EnumMap<>(Op.class);
        for (ParityCase c : ParityCases.all())
            cases.computeIfAbsent(c.op(), k -> new ArrayList<>()).add(c);
        Map<String, Integer> notes = new LinkedHashMap<>(); // reason -> its number, in order of first use
        List<String[]> rows = new ArrayList<>();
        for (Op op : Op.values()) {
            String[] row = new String[names.size() + 1];
            row[0] = op.name();
            for (int b = 0; b < names.size(); b++) row[b + 1] = cell(op, cases.get(op), declared.get(b), notes);
            rows.add(row);
        }
        String[] header = new String[names.size() + 1];
        header[0] = "op";
        for (int b = 0; b < names.size(); b++) header[b + 1] = names.get(b);
        List<String> noteLines = new ArrayList<>();
        notes.forEach((why, n) -> noteLines.add("[" + n + "] " + why));
        for (String a : absent) noteLines.add("not on the class path: " + a);
        for (String u : unreadable) noteLines.add("declaration not readable: " + u);
        return markdown ? markdown(header, rows, noteLines) : text(header, rows, noteLines);
    }

    private static String cell(Op op, List<ParityCase> cases, OpSupport support, Map<String, Integer> notes) {
        if (op == Op.INPUT || op == Op.CONSTANT) return "leaf";
        if (cases == null || cases.isEmpty()) return "no case";
        Set<String> why = new LinkedHashSet<>();
        int unsupported = 0;
        for (ParityCase c : cases) {
            String w = support.unsupported(c.node());
            if (w != null) {
                unsupported++;
                why.add(w);
            }
        }
        if (unsupported == 0) return "yes";
        StringBuilder s = new StringBuilder(unsupported == cases.size() ? "no" : "partial");
        for (String w : why)
            s.append(" [")
                    .append(notes.computeIfAbsent(w, k -> notes.size() + 1))
                    .append(']');
        return s.toString();
    }

    private static String text(String[] header, List<String[]> rows, List<String> notes) {
        int[] w = new int[header.length];
        for (int i = 0; i < w.length; i++) w[i] = header[i].length();
        for (String[] r : rows) for (int i = 0; i < w.length; i++) w[i] = Math.max(w[i], r[i].length());
        StringBuilder sb = new StringBuilder(
                "op support by backend: each backend's declaration asked about every parity case of the op (yes:"
                        + " every case, partial: some, no: none; leaf: a value, never computed)\n");
        List<String[]> all = new ArrayList<>();
        all.add(header);
        all.addAll(rows);
        for (String[] r : all) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < r.length; i++)
                line.append(String.format(Locale.ROOT, "%-" + w[i] + "s", r[i])).append("  ");
            sb.append(line.toString().stripTrailing()).append('\n');
        }
        for (String n : notes) sb.append(n).append('\n');
        return sb.toString();
    }

    private static String markdown(String[] header, List<String[]> rows, List<String> notes) {
        StringBuilder sb = new StringBuilder("# Op support by backend\n\n");
        sb.append("Generated by `")
                .append(COMMAND)
                .append("`; do not edit (cli's `ParityCommandTest` fails when this file differs from what the command")
                .append(" prints).\n\n");
        sb.append("Each op of `engine-core/src/main/java/io/attn/graph/Op.java` against each backend's declaration of")
                .append(" what it computes (`BackendProvider.support()`, the rule its `supports(node)` follows), asked")
                .append(" about every parity case of the op (`ParityCases`): **yes** every case, **partial** some (the")
                .append(" note gives the backend's reason for the others), **no** none; **leaf**: a value, never")
                .append(" computed. A case a backend does not support is SKIP in `attn parity`, not passed.\n\n");
        sb.append(mdRow(header));
        String[] rule = new String[header.length];
        java.util.Arrays.fill(rule, "---");
        sb.append(mdRow(rule));
        for (String[] r : rows) {
            String[] cells = r.clone();
            cells[0] = "`" + cells[0] + "`";
            sb.append(mdRow(cells));
        }
        if (!notes.isEmpty()) {
            sb.append('\n');
            for (String n : notes) sb.append("- ").append(n).append('\n');
        }
        return sb.toString();
    }

    private static String mdRow(String[] cells) {
        StringBuilder sb = new StringBuilder("|");
        for (String c : cells) sb.append(' ').append(c.replace("|", "\\|")).append(" |");
        return sb.append('\n').toString();
    }
}
