package io.attn.cpu;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.backend.Buffer;
import io.attn.backend.Program;
import io.attn.cpu.ops.Attention;
import io.attn.cpu.ops.CacheWrite;
import io.attn.cpu.ops.Concat;
import io.attn.cpu.ops.Elementwise;
import io.attn.cpu.ops.Embedding;
import io.attn.cpu.ops.Fusions;
import io.attn.cpu.ops.Glu;
import io.attn.cpu.ops.Heads;
import io.attn.cpu.ops.LayerNorm;
import io.attn.cpu.ops.MatMul;
import io.attn.cpu.ops.Mean;
import io.attn.cpu.ops.PositionalEncoding;
import io.attn.cpu.ops.QMatMul;
import io.attn.cpu.ops.RmsNorm;
import io.attn.cpu.ops.Rope;
import io.attn.cpu.ops.Softmax;
import io.attn.graph.Graph;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.tensor.DType;
import jdk.incubator.vector.FloatVector;

/**
 * The CPU backend: float32 Java arrays and kernels on the Vector API ({@link FloatVector#SPECIES_PREFERRED}), with a
 * thread pool of {@link BackendOptions#effectiveThreads()} threads for the large ops. Thread-safe: kernels keep no
 * shared mutable state (scratch is per thread) and write only their output buffer. Always float32: a requested TF32,
 * BF16 or FP16 precision is ignored (and named in {@link #description}).
 */
public final class CpuBackend implements Backend {
    private final Parallel par;
    private final String precisionNote;

    /** The backend option naming how long waiting threads spin before they sleep ({@link Parallel}), microseconds. */
    public static final String SPIN_OPTION = "spin-us";

    public CpuBackend(BackendOptions options) {
        this.par = new Parallel(
                options.effectiveThreads(),
                spinMicros(options.extra().get(SPIN_OPTION), System.getProperty("attn.cpu.spin-us")));
        // reduced precisions are a GPU feature: here they are accepted and ignored, and the description says so
        this.precisionNote = options.precision() == io.attn.engine.Precision.FP32
                ? ""
                : "; precision " + options.precision().name().toLowerCase(java.util.Locale.ROOT)
                        + " requested, computed in fp32 (the cpu backend has no reduced-precision modes)";
    }

    @Override
    public String name() {
        return "cpu";
    }

    @Override
    public String description() {
        return describe(par.threads())
                + (par.threads() > 1 ? ", waiting threads spin " + par.spinMicros() + " us" : "")
                + precisionNote;
    }

    /**
     * The spin of waiting threads: the backend option {@code spin-us} ({@code --backend-opt spin-us=N}), else {@code
     * -Dattn.cpu.spin-us=N}, else {@link Parallel#DEFAULT_SPIN_US}; an integer from 0 to {@link Parallel#MAX_SPIN_US},
     * else a bad-input error naming the setting.
     */
    static int spinMicros(String option, String property) {
        String v = option != null ? option : property;
        if (v == null) return Parallel.DEFAULT_SPIN_US;
        int n;
        try {
            n = Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            n = -1;
        }
        if (n < 0 || n > Parallel.MAX_SPIN_US)
            throw AttnException.badInput((option != null ? "option " + SPIN_OPTION + "=" : "-Dattn.cpu.spin-us=") + v
                    + ": expected an integer from 0 to " + Parallel.MAX_SPIN_US + " (microseconds)");
        return n;
    }

    static String describe(int threads) {
        return "Java Vector API, " + FloatVector.SPECIES_PREFERRED.vectorBitSize() + "-bit float vectors ("
                + FloatVector.SPECIES_PREFERRED.length() + " lanes), " + threads + " thread"
                + (threads == 1 ? "" : "s");
    }

    public int threads() {
        return par.threads();
    }

    @Override
    public boolean supports(Node node) {
        return unsupported(node) == null;
    }

    /** What this backend computes ({@link CpuBackendProvider#support}): every op, on F32 tensors. */
    static String unsupported(Node node) {
        return node.dtype() == DType.F32 ? null : node.dtype() + " tensors (the cpu backend computes F32 only)";
    }

    @Override
    public Buffer allocate(DType dtype, long elements) {
        if (dtype != DType.F32)
            throw new IllegalArgumentException("the CPU backend holds F32 buffers only, not " + dtype);
        if (elements < 0 || elements > Integer.MAX_VALUE - 16)
            throw new AttnException(
                    AttnException.Code.DEVICE_OUT_OF_MEMORY, "a CPU buffer of " + elements + " floats is too large");
        try {
            return new CpuBuffer(new float[(int) elements]);
        } catch (OutOfMemoryError e) {
            throw new AttnException(
                    AttnException.Code.DEVICE_OUT_OF_MEMORY,
                    "out of Java heap allocating " + elements + " floats (raise -Xmx)",
                    e);
        }
    }

    @Override
    public void upload(float[] src, int count, Buffer dst) {
        System.arraycopy(src, 0, CpuBuffer.of(dst), 0, count);
    }

    @Override
    public void download(Buffer src, float[] dst, int count) {
        System.arraycopy(CpuBuffer.of(src), 0, dst, 0, count);
    }

    @Override
    public Buffer outputView(float[] dst) {
        return new CpuBuffer(dst);
    }

    /** The graph with this backend's fusions ({@link Fusions}: GEMM epilogues, the attention weights). */
    @Override
    public Program compile(Graph graph) {
        return Fusions.compile(graph, this, par);
    }

    @Override
    public Buffer hostView(float[] data) {
        return new CpuBuffer(data);
    }

    @Override
    public void execute(Node node, Buffer out, Buffer[] inputs) {
        float[] o = CpuBuffer.of(out);
        float[][] in = new float[inputs.length][];
        for (int i = 0; i < in.length; i++) in[i] = CpuBuffer.of(inputs[i]);
        int n = node.shape().size();
        // "case null" makes this an enhanced switch, which javac requires to be exhaustive: a new Op breaks this build
        switch (node.op()) {
            case null -> throw new IllegalStateException(node + " has no op");
            case INPUT, CONSTANT -> throw new IllegalStateException(node + " is a leaf and is never executed");
            case MATMUL -> MatMul.run(par, node, o, in);
            case ADD_BIAS ->
                Elementwise.addBias(
                        par,
                        o,
                        in[0],
                        in[1],
                        node.shape().leading(1),
                        node.shape().dim(-1));
            case ADD -> Elementwise.add(par, o, in[0], in[1], n);
            case SCALE ->
                Elementwise.scale(
                        par, o, in[0], node.params(OpParams.Scale.class).factor(), n);
            case SOFTMAX -> Softmax.run(par, node, o, in);
            case LAYER_NORM -> LayerNorm.run(par, node, o, in);
            case RELU -> Elementwise.relu(par, o, in[0], n);
            case SILU -> Elementwise.silu(par, o, in[0], n);
            case GELU ->
                Elementwise.gelu(
                        par, o, in[0], n, node.params(OpParams.Gelu.class).tanh());
            case EMBEDDING -> Embedding.run(node, o, in[0], in[1]);
            case POSITIONAL_ENCODING -> PositionalEncoding.run(par, node, o, in[0]);
            case SPLIT_HEADS -> Heads.splitHeads(par, node, o, in[0]);
            case MERGE_HEADS -> Heads.mergeHeads(par, node, o, in[0]);
            case CONCAT -> Concat.run(node, o, in);
            case MEAN -> Mean.run(node, o, in[0]);
            case ATTENTION -> Attention.run(par, node, o, in);
            case CACHE_WRITE -> CacheWrite.run(node, o, in[0], in[1], in[2]);
            case RMS_NORM -> RmsNorm.run(par, node, o, in);
            case ROPE -> Rope.run(par, node, o, in);
            case GLU -> Glu.run(par, node, o, in[0]);
            case QMATMUL -> QMatMul.run(par, node, o, in[0], in.length > 1 ? in[1] : null);
            case QEMBEDDING -> Embedding.runInt8(node, o, in[0]);
        }
    }

    @Override
    public void close() {
        par.close();
    }
}
