package io.attn.exec;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.backend.Buffer;
import io.attn.graph.Graph;
import io.attn.graph.Node;
import io.attn.graph.Op;
import io.attn.graph.OpParams;
import io.attn.tensor.DType;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * Runs one {@link Graph} on one {@link Backend}. Constants are uploaded once, when the executor is made. Intermediate
 * values live in backend buffers planned by {@link BufferPlan}; the set of buffers for one run (an arena) is pooled
 * and reused, so steady-state calls allocate only their outputs. Values stay on the backend from the inputs' upload
 * to the outputs' download.
 *
 * <p>Thread-safe: concurrent {@link #run} calls each take their own arena from the pool.
 */
public final class Executor implements AutoCloseable {
    private final Graph graph;
    private final Backend backend;
    private final BufferPlan plan;
    private final Buffer[] constants; // by node id; null for non-constants
    private final ConcurrentLinkedDeque<Buffer[]> arenas = new ConcurrentLinkedDeque<>();
    private volatile boolean closed;

    public Executor(Backend backend, Graph graph) {
        this.graph = graph;
        this.backend = backend;
        for (Node n : graph.nodes())
            if (!n.isLeaf() && !backend.supports(n))
                throw new AttnException(
                        AttnException.Code.DEVICE_UNAVAILABLE,
                        "backend " + backend.name() + " does not support " + n + " " + n.params());
        this.plan = new BufferPlan(graph);
        this.constants = new Buffer[graph.nodes().size()];
        for (Node n : graph.nodes())
            if (n.op() == Op.CONSTANT)
                constants[n.id()] = backend.hostView(
                        n.params(OpParams.Constant.class).value().data());
    }

    public Graph graph() {
        return graph;
    }

    public BufferPlan plan() {
        return plan;
    }

    /** Runs the graph; {@code inputs} maps each graph input name to a tensor of the declared shape. */
    public List<Tensor> run(Map<String, Tensor> inputs) {
        if (closed) throw new IllegalStateException("executor is closed");
        Buffer[] values = new Buffer[graph.nodes().size()];
        List<Buffer> uploaded = new ArrayList<>();
        for (var e : graph.inputs().entrySet()) {
            Tensor t = inputs.get(e.getKey());
            Node n = e.getValue();
            if (t == null) throw AttnException.badInput("missing graph input '" + e.getKey() + "'");
            if (!t.shape().equals(n.shape()))
                throw AttnException.shape(
                        "input '" + e.getKey() + "' has shape " + t.shape() + ", graph expects " + n.shape());
            Buffer b = backend.hostView(t.data());
            uploaded.add(b);
            values[n.id()] = b;
        }
        Buffer[] arena = arenas.pollFirst();
        if (arena == null) arena = newArena();
        // a backend whose host views share the array computes outputs straight into the returned arrays
        float[][] direct = new float[graph.nodes().size()][];
        if (backend.hostViewIsShared())
            for (Node o : graph.outputs())
                if (!o.isLeaf() && direct[o.id()] == null)
                    direct[o.id()] = new float[o.shape().size()];
        try {
            for (Node n : graph.nodes()) {
                switch (n.op()) {
                    case INPUT -> {}
                    case CONSTANT -> values[n.id()] = constants[n.id()];
                    default -> {
                        Buffer out = direct[n.id()] != null ? backend.hostView(direct[n.id()]) : arena[plan.slotOf(n)];
                        Buffer[] ins = new Buffer[n.inputs().size()];
                        for (int i = 0; i < ins.length; i++)
                            ins[i] = values[n.input(i).id()];
                        backend.execute(n, out, ins);
                        values[n.id()] = out;
                    }
                }
            }
            List<Tensor> outs = new ArrayList<>(graph.outputs().size());
            for (Node o : graph.outputs()) {
                float[] host = direct[o.id()];
                if (host != null) direct[o.id()] = null; // a second listing of the same output gets its own copy
                else {
                    host = new float[o.shape().size()];
                    backend.download(values[o.id()], host, host.length);
                }
                outs.add(Tensor.of(o.shape(), host));
            }
            return outs;
        } finally {
            arenas.addFirst(arena);
            for (Buffer b : uploaded) backend.release(b);
        }
    }

    private Buffer[] newArena() {
        long[] sizes = plan.slotSizes();
        Buffer[] a = new Buffer[sizes.length];
        for (int i = 0; i < sizes.length; i++) a[i] = backend.allocate(DType.F32, Math.max(1, sizes[i]));
        return a;
    }

    /** Releases pooled buffers and constants. Callers must not run after closing. */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        Buffer[] a;
        while ((a = arenas.pollFirst()) != null) for (Buffer b : a) backend.release(b);
        for (Buffer b : constants) if (b != null) backend.release(b);
    }
}
