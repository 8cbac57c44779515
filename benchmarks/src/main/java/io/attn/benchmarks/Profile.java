package io.attn.benchmarks;

import io.attn.backend.Backend;
import io.attn.backend.Buffer;
import io.attn.backend.Program;
import io.attn.graph.Graph;
import io.attn.graph.Node;
import io.attn.tensor.DType;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Where the time goes: runs a {@link Workload}'s attn side through a backend wrapper that times every op, and prints
 * milliseconds per call by op and shape (calling-thread CPU time, so meaningful with {@code --threads 1} on a busy
 * machine). Usage as {@link Compare} ({@code io.attn.benchmarks.Profile encoder-layer
 * --threads 1}).
 */
public final class Profile {
    private Profile() {}

    public static void main(String[] args) {
        Map<String, String> o = new java.util.HashMap<>();
        for (int i = 1; i < args.length; i++) {
            String key = args[i].replaceFirst("^--", "");
            if (i + 1 < args.length && !args[i + 1].startsWith("--")) o.put(key, args[++i]);
            else o.put(key, "true");
        }
        int runs = Compare.num(o, "runs", 10);
        System.setProperty("attn.profile", "true");
        try (Workload w = Compare.create(args[0], o, Compare.num(o, "threads", 1))) {
            Timed t = (Timed) w.backend;
            for (int i = 0; i < 3; i++) w.ours();
            t.times.clear();
            long s = System.nanoTime();
            for (int i = 0; i < runs; i++) w.ours();
            double total = (System.nanoTime() - s) / 1e6 / runs;
            double ops = 0;
            for (var e : t.times.entrySet()) {
                double ms = e.getValue()[0] / 1e6 / runs;
                ops += ms;
                System.out.printf(Locale.ROOT, "%9.3f ms  %s%n", ms, e.getKey());
            }
            System.out.printf(Locale.ROOT, "%9.3f ms  ops, %.3f ms per call in all%n", ops, total);
        }
    }

    /** Times {@link Backend#execute} per op and output shape: CPU time of the calling thread (use 1 thread). */
    static final class Timed implements Backend {
        final Backend b;
        final Map<String, long[]> times = new TreeMap<>();
        private static final java.lang.management.ThreadMXBean MX =
                java.lang.management.ManagementFactory.getThreadMXBean();

        Timed(Backend b) {
            this.b = b;
        }

        @Override
        public String name() {
            return b.name();
        }

        @Override
        public String description() {
            return b.description();
        }

        @Override
        public boolean supports(Node node) {
            return b.supports(node);
        }

        @Override
        public Buffer allocate(DType dtype, long elements) {
            return b.allocate(dtype, elements);
        }

        @Override
        public void release(Buffer buffer) {
            b.release(buffer);
        }

        @Override
        public void upload(float[] src, int count, Buffer dst) {
            b.upload(src, count, dst);
        }

        @Override
        public void download(Buffer src, float[] dst, int count) {
            b.download(src, dst, count);
        }

        @Override
        public Buffer hostView(float[] data) {
            return b.hostView(data);
        }

        @Override
        public Buffer outputView(float[] dst) {
            return b.outputView(dst);
        }

        /** The wrapped backend's program (its fusions), each step timed under its name and output shape. */
        @Override
        public Program compile(Graph graph) {
            Program p = b.compile(graph);
            List<Program.Step> steps = new ArrayList<>();
            for (Program.Step st : p.steps()) {
                String key = st.name() + " " + st.output().shape();
                Program.Kernel k = st.kernel();
                steps.add(new Program.Step(
                        st.name(), st.covers(), st.inputs(), st.scratch(), st.inPlace(), (o, in, sc) -> {
                            long s = MX.getCurrentThreadCpuTime();
                            k.run(o, in, sc);
                            times.computeIfAbsent(key, x -> new long[1])[0] += MX.getCurrentThreadCpuTime() - s;
                        }));
            }
            return new Program(graph, steps);
        }

        @Override
        public void execute(Node node, Buffer out, Buffer[] inputs) {
            long s = MX.getCurrentThreadCpuTime();
            b.execute(node, out, inputs);
            long d = MX.getCurrentThreadCpuTime() - s;
            String key = node.op() + " " + node.shape() + " " + node.params();
            times.computeIfAbsent(key, k -> new long[1])[0] += d;
        }

        @Override
        public void close() {}
    }
}
