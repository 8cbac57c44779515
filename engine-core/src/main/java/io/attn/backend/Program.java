package io.attn.backend;

import io.attn.graph.Graph;
import io.attn.graph.Node;
import io.attn.graph.Op;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What a backend runs for a {@link Graph}: its {@link Step}s in order, made by {@link Backend#compile}. The graph says
 * what PyTorch computes, op by op; the program says how this backend computes it. One step may cover several graph
 * nodes (a fusion: a GEMM with its bias and ReLU, the attention scores with their softmax), in which case only the
 * last node's value exists at run time and the nodes before it are never stored.
 *
 * <p>The executor gives each step its output buffer, its input buffers (in {@link Step#inputs()} order) and, when the
 * step asks for one, a scratch buffer that lives for that step only; all of them come from one buffer plan, so a
 * backend keeps no working memory of its own.
 */
public record Program(Graph graph, List<Step> steps) {
    public Program {
        steps = List.copyOf(steps);
        check(graph, steps);
    }

    /** Runs one step: computes its output into {@code out} from {@code inputs}; {@code scratch} is null unless asked. */
    @FunctionalInterface
    public interface Kernel {
        void run(Buffer out, Buffer[] inputs, Buffer scratch);
    }

    /**
     * One launch. {@code covers} are the graph nodes it computes, in graph order, the last being the node whose value
     * it produces ({@link #output()}); {@code inputs} are the values it reads (leaves or outputs of earlier steps).
     * {@code scratch} elements of working memory are handed to the kernel (0: none). With {@code inPlace >= 0} the
     * output is written into the buffer of input {@code inPlace} (see {@link Op#inPlaceInput()}).
     */
    public record Step(String name, List<Node> covers, List<Node> inputs, long scratch, int inPlace, Kernel kernel) {
        public Step {
            covers = List.copyOf(covers);
            inputs = List.copyOf(inputs);
            if (covers.isEmpty()) throw new IllegalArgumentException("a step covers at least one node");
            if (scratch < 0) throw new IllegalArgumentException("negative scratch " + scratch);
            if (inPlace >= inputs.size())
                throw new IllegalArgumentException("in-place input " + inPlace + " of " + name);
        }

        /** A step that computes one node as the graph says (its inputs are the node's). */
        public static Step of(Node node, long scratch, Kernel kernel) {
            return new Step(
                    node.op().name(),
                    List.of(node),
                    node.inputs(),
                    scratch,
                    node.op().inPlaceInput(),
                    kernel);
        }

        /** The node whose value this step produces. */
        public Node output() {
            return covers.get(covers.size() - 1);
        }
    }

    /** One step per node, each running {@code backend.execute}: the program of a backend that fuses nothing. */
    public static Program unfused(Graph graph, Backend backend) {
        Builder b = new Builder(graph);
        for (Node n : graph.nodes()) if (!n.isLeaf()) b.single(n, backend);
        return b.build();
    }

    /** How many steps cover more than one node. */
    public int fusedSteps() {
        int k = 0;
        for (Step s : steps) if (s.covers().size() > 1) k++;
        return k;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        for (Step s : steps) {
            sb.append(s.name()).append(' ').append(s.covers()).append(" <-");
            for (Node in : s.inputs()) sb.append(" %").append(in.id());
            sb.append('\n');
        }
        return sb.toString();
    }

    /**
     * Builds a program while a backend's {@code compile} walks the graph: it asks {@link #soleReader} whether a node's
     * value may be fused away (read by one node only, not a graph output), then adds a {@link #fused} step for a match
     * or a {@link #single} one.
     */
    public static final class Builder {
        private final Graph graph;
        private final List<Node>[] readers;
        private final boolean[] covered;
        private final boolean[] output;
        private final List<Step> steps = new ArrayList<>();

        @SuppressWarnings("unchecked")
        public Builder(Graph graph) {
            this.graph = graph;
            int n = graph.nodes().size();
            readers = new List[n];
            for (int i = 0; i < n; i++) readers[i] = new ArrayList<>(2);
            for (Node node : graph.nodes())
                for (Node in : node.inputs()) if (!readers[in.id()].contains(node)) readers[in.id()].add(node);
            covered = new boolean[n];
            output = new boolean[n];
            for (Node o : graph.outputs()) output[o.id()] = true;
        }

        public Graph graph() {
            return graph;
        }

        /** Whether a step already computes {@code node} (it was fused into an earlier match). */
        public boolean covered(Node node) {
            return covered[node.id()];
        }

        /**
         * The one node that reads {@code node}'s value, when there is exactly one and the value is not a graph output
         * (so a step may compute both without storing {@code node}); otherwise null.
         */
        public Node soleReader(Node node) {
            if (output[node.id()] || readers[node.id()].size() != 1) return null;
            Node r = readers[node.id()].get(0);
            int uses = 0;
            for (Node in : r.inputs()) if (in == node) uses++;
            return uses == 1 ? r : null;
        }

        /**
         * Whether {@code value} exists before a step whose first node is {@code first} runs: a leaf, or a node computed
         * earlier (a step's inputs must be; a node after {@code first} is computed after the step).
         */
        public static boolean before(Node value, Node first) {
            return value.isLeaf() || value.id() < first.id();
        }

        /**
         * The attention weights as the graph builds them, {@code MATMUL q k^T} (alpha 1, k batched like q) read only
         * by a {@code SOFTMAX} (scale and masks): that SOFTMAX node when {@code mm} starts the pattern and the masks
         * exist before it, else null. The step covering both reads {@code q, k,} then the masks ({@link
         * #attentionWeightsInputs}). Both backends fuse it, each with its kernels.
         */
        public Node attentionWeights(Node mm) {
            if (mm.op() != Op.MATMUL) return null;
            var p = mm.params(io.attn.graph.OpParams.MatMul.class);
            Node sm = soleReader(mm);
            if (sm == null
                    || sm.op() != Op.SOFTMAX
                    || sm.input(0) != mm
                    || p.transA()
                    || !p.transB()
                    || p.alpha() != 1f
                    || mm.input(1).shape().rank() != mm.input(0).shape().rank()) return null;
            for (Node m : sm.inputs().subList(1, sm.inputs().size())) if (!before(m, mm)) return null;
            return sm;
        }

        /** The inputs of a step covering {@link #attentionWeights}' match: q, k, then the softmax's masks. */
        public static List<Node> attentionWeightsInputs(Node mm, Node softmax) {
            List<Node> in = new ArrayList<>(List.of(mm.input(0), mm.input(1)));
            in.addAll(softmax.inputs().subList(1, softmax.inputs().size()));
            return in;
        }

        /** Adds a step computing {@code node} alone with {@code backend.execute}. */
        public void single(Node node, Backend backend) {
            add(Step.of(node, 0, (out, in, scratch) -> backend.execute(node, out, in)));
        }

        /** Adds a step covering {@code covers} (in graph order), reading {@code inputs}. */
        public void fused(String name, List<Node> covers, List<Node> inputs, long scratch, Kernel kernel) {
            add(new Step(name, covers, inputs, scratch, -1, kernel));
        }

        public void add(Step step) {
            for (Node n : step.covers()) {
                if (n.isLeaf()) throw new IllegalArgumentException(step.name() + " covers leaf " + n);
                if (covered[n.id()]) throw new IllegalArgumentException(step.name() + ": " + n + " is covered twice");
                covered[n.id()] = true;
            }
            steps.add(step);
        }

        public Program build() {
            return new Program(graph, steps);
        }
    }

    /**
     * A program is valid when its steps cover every computed node exactly once, in an order where each step's inputs
     * exist (leaves, or outputs of earlier steps), and no value a step stores is fused away: a node covered by a step
     * but not its output is read by nothing outside that step and is not a graph output.
     */
    private static void check(Graph graph, List<Step> steps) {
        int n = graph.nodes().size();
        int[] stepOf = new int[n];
        Arrays.fill(stepOf, -1);
        for (int s = 0; s < steps.size(); s++)
            for (Node c : steps.get(s).covers()) {
                if (c.id() >= n || graph.nodes().get(c.id()) != c)
                    throw new IllegalArgumentException(c + " is not a node of this graph");
                if (stepOf[c.id()] >= 0) throw new IllegalArgumentException(c + " is covered by two steps");
                stepOf[c.id()] = s;
            }
        for (Node node : graph.nodes())
            if (!node.isLeaf() && stepOf[node.id()] < 0)
                throw new IllegalArgumentException(node + " is computed by no step");
        for (Node node : graph.nodes()) {
            for (Node in : node.inputs()) {
                int si = stepOf[in.id()];
                if (si >= 0 && steps.get(si).output() != in && stepOf[node.id()] != si)
                    throw new IllegalArgumentException(
                            in + " is fused into " + steps.get(si).name() + " but " + node + " reads it");
            }
        }
        boolean[] available = new boolean[n];
        for (Node node : graph.nodes()) if (node.isLeaf()) available[node.id()] = true;
        for (Step s : steps) {
            for (Node in : s.inputs())
                if (!available[in.id()])
                    throw new IllegalArgumentException(s.name() + " reads " + in + " before any step computes it");
            available[s.output().id()] = true;
        }
        for (Node o : graph.outputs()) {
            int si = stepOf[o.id()];
            if (si >= 0 && steps.get(si).output() != o)
                throw new IllegalArgumentException(
                        "graph output " + o + " is fused into " + steps.get(si).name());
        }
        for (Step s : steps)
            if (s.inPlace() >= 0) {
                Node target = s.inputs().get(s.inPlace());
                if (target.op() != Op.INPUT)
                    throw new IllegalArgumentException(
                            s.name() + " writes in place into " + target + ", which is not a graph input");
                for (Node node : graph.nodes())
                    if (node.inputs().contains(target) && !s.covers().contains(node))
                        throw new IllegalArgumentException(
                                s.name() + " writes in place into " + target + ", which " + node + " also reads");
                if (graph.outputs().contains(target))
                    throw new IllegalArgumentException(
                            s.name() + " writes in place into " + target + ", a graph output");
            }
    }
}
