package io.attn.cuda;

import io.attn.AttnException;
import io.attn.cuda.ops.Attention;
import io.attn.engine.Precision;
import io.attn.graph.MaskKind;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.kernels.Kernel;
import io.attn.tensor.Shape;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * ATTENTION through cuDNN's fused flash SDPA ({@code --backend-opt attention=cudnn}): the operation graph that
 * cudnn-frontend's SDPA node lowers to for inference ({@link #graph}: matmul Q K^T, a pointwise multiply by the scale,
 * for causal attention GEN_INDEX row / column, CMP_GE and BINARY_SELECT with -inf, then the softmax as reduction max,
 * sub, exp, reduction add, div, then matmul with V), built through the backend API ({@link FfmCudnn}), one execution
 * plan per {@link Key} (heuristics mode A, then the fallback mode; the first configuration that finalizes), cached.
 *
 * <p>q, k, v are converted to 16 bits into the op's scratch exactly as the FlashAttention-2 path does ({@code
 * f32_to_bf16} / {@code f32_to_f16}), cuDNN writes a 16-bit O after them, and {@code bf16_to_f32} / {@code f16_to_f32}
 * ({@code convert.cu}) widen it into the fp32 output. The workspace comes from the device pool.
 *
 * <p>Cases it takes ({@link #unsupported}): precision BF16 / FP16, compute capability 8.0+, head dim D == Dv, a multiple
 * of 8, at most 128 (at FP16 only 64 and 128, where the default path too rounds q, k, v to fp16, whose range ends at
 * 65504; elsewhere it keeps them fp32), grouped K/V heads, no mask or causal (top-left, as the engine's). Anything else (fp32, attention
 * or key-padding masks, sliding windows, ragged batches), and a shape whose plan cuDNN refuses, runs the default flash
 * path; {@link #run} returns false for it and a refused plan is reported once, as one warning line.
 */
public final class CudnnAttention implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(CudnnAttention.class.getName());

    /** Unique ids of the graph's non-virtual tensors (the variant pack names them). */
    static final long UID_Q = 1, UID_K = 2, UID_V = 3, UID_O = 4, UID_SCALE = 5, UID_NEG_INF = 6;

    /** What one plan is built for: the 16-bit type, the (B, H, L, D) / (B, Hkv, S, D) shapes, causal or not. */
    public record Key(boolean bf16, int b, int h, int hkv, int l, int s, int d, boolean causal) {}

    /** A tensor of the graph: dims and strides (4-d), cuDNN data type, virtual (never in memory) or by-value. */
    record TensorSpec(long uid, int dtype, long[] dims, long[] strides, boolean virtual, boolean byValue) {}

    /** An operation node of the graph; tensors by unique id. */
    sealed interface OpSpec permits MatmulOp, PointwiseOp, ReductionOp {}

    /** C = A B (fp32 accumulation). */
    record MatmulOp(long a, long b, long c) implements OpSpec {}

    /** y = mode(x [, b [, t]]) computed in {@code prec}; {@code axis} only for GEN_INDEX (else -1), b / t 0 if unused. */
    record PointwiseOp(int mode, int prec, long axis, long x, long b, long t, long y) implements OpSpec {}

    /** y = reduction of x over the dims where y has extent 1. */
    record ReductionOp(int op, long x, long y) implements OpSpec {}

    /** The operation graph of {@link #graph}. */
    record Graph(Key key, List<TensorSpec> tensors, List<OpSpec> ops) {
        TensorSpec tensor(long uid) {
            for (TensorSpec t : tensors) if (t.uid() == uid) return t;
            throw new IllegalArgumentException("no tensor " + uid);
        }
    }

    /**
     * Null when cuDNN's fused SDPA takes this ATTENTION at {@code precision} on compute capability {@code capability},
     * else why not (one phrase, for the fallback line).
     */
    public static String unsupported(Precision precision, int capability, Node node) {
        if (precision != Precision.BF16 && precision != Precision.FP16)
            return "precision " + precision.name().toLowerCase(Locale.ROOT) + " (cuDNN's fused attention is bf16/fp16)";
        if (capability < 80) return "compute capability " + capability / 10 + "." + capability % 10 + " (needs 8.0+)";
        Shape q = node.input(0).shape(),
                k = node.input(1).shape(),
                v = node.input(2).shape();
        int d = q.dim(3), dv = v.dim(3), h = q.dim(1), hkv = k.dim(1);
        if (d != dv) return "head dims D " + d + " != Dv " + dv;
        if (d % 8 != 0 || d > 128) return "head dim " + d + " (cuDNN takes multiples of 8 up to 128)";
        // fp16's range is fp32's only up to 65504: convert to fp16 only where the default path does (the FA2 kernels)
        if (precision == Precision.FP16 && d != 64 && d != 128)
            return "head dim " + d
                    + " at fp16 (the default path keeps fp32 inputs there; cuDNN would round them to fp16)";
        if (hkv == 0 || h % hkv != 0) return "query heads " + h + " not a multiple of K/V heads " + hkv;
        MaskSpec m = node.params(OpParams.Attention.class).mask();
        if (m.segmented()) return "a ragged batch (segments)";
        if (m.attnMask() != MaskKind.NONE) return "an attention mask input";
        if (m.keyPadding() != MaskKind.NONE)
            return "a key-padding mask (cuDNN's padding takes sequence lengths, this is a mask tensor)";
        if (m.windowed()) return "a sliding window";
        return null;
    }

    /** The plan key of {@code node} (supported: {@link #unsupported} is null). */
    static Key key(Precision precision, Node node) {
        Shape q = node.input(0).shape(), k = node.input(1).shape();
        return new Key(
                precision == Precision.BF16,
                q.dim(0),
                q.dim(1),
                k.dim(1),
                q.dim(2),
                k.dim(2),
                q.dim(3),
                node.params(OpParams.Attention.class).mask().causal());
    }

    /**
     * Floats of scratch this path takes: the 16-bit q (B,H,L,D), k, v (B,Hkv,S,D) and o (B,H,L,D), one after another
     * (each a multiple of 16 bytes: D is a multiple of 8).
     */
    public static long scratch(Node node) {
        Shape q = node.input(0).shape(), k = node.input(1).shape();
        long b = q.dim(0), h = q.dim(1), l = q.dim(2), d = q.dim(3), hkv = k.dim(1), s = k.dim(2);
        return (b * d * (2 * h * l + 2 * hkv * s) + 1) / 2;
    }

    /**
     * The inference graph for {@code k}, as cudnn-frontend's composite SDPA node builds it (no stats output, no dropout):
     * Q (B,H,L,D) and V (B,Hkv,S,D) row-major, K given as K^T (B,Hkv,D,S) over the same row-major (B,Hkv,S,D) memory
     * (strides swapped), O (B,H,L,D); scores and softmax intermediates fp32 and virtual, the probabilities in the
     * 16-bit type for the second matmul; the scale and -inf by-value fp32 scalars.
     */
    static Graph graph(Key k) {
        int io = k.bf16() ? FfmCudnn.DATA_BFLOAT16 : FfmCudnn.DATA_HALF, f32 = FfmCudnn.DATA_FLOAT;
        long b = k.b(), h = k.h(), hkv = k.hkv(), l = k.l(), s = k.s(), d = k.d();
        List<TensorSpec> t = new ArrayList<>();
        List<OpSpec> ops = new ArrayList<>();
        long[] scoreDims = {b, h, l, s}, scoreStrides = {h * l * s, l * s, s, 1};
        long[] rowDims = {b, h, l, 1}, rowStrides = {h * l, l, 1, 1};
        long[] one = {1, 1, 1, 1};
        t.add(new TensorSpec(UID_Q, io, new long[] {b, h, l, d}, new long[] {h * l * d, l * d, d, 1}, false, false));
        t.add(new TensorSpec(
                UID_K, io, new long[] {b, hkv, d, s}, new long[] {hkv * s * d, s * d, 1, d}, false, false));
        t.add(new TensorSpec(
                UID_V, io, new long[] {b, hkv, s, d}, new long[] {hkv * s * d, s * d, d, 1}, false, false));
        t.add(new TensorSpec(UID_O, io, new long[] {b, h, l, d}, new long[] {h * l * d, l * d, d, 1}, false, false));
        t.add(new TensorSpec(UID_SCALE, f32, one, one, false, true));
        long next = 100;
        long scores = next++;
        t.add(new TensorSpec(scores, f32, scoreDims, scoreStrides, true, false));
        ops.add(new MatmulOp(UID_Q, UID_K, scores));
        long scaled = next++;
        t.add(new TensorSpec(scaled, f32, scoreDims, scoreStrides, true, false));
        ops.add(new PointwiseOp(FfmCudnn.PW_MUL, f32, -1, scores, UID_SCALE, 0, scaled));
        long last = scaled;
        if (k.causal()) {
            long row = next++, col = next++, keep = next++, masked = next++;
            t.add(new TensorSpec(UID_NEG_INF, f32, one, one, false, true));
            t.add(new TensorSpec(row, FfmCudnn.DATA_INT32, scoreDims, scoreStrides, true, false));
            t.add(new TensorSpec(col, FfmCudnn.DATA_INT32, scoreDims, scoreStrides, true, false));
            t.add(new TensorSpec(keep, FfmCudnn.DATA_BOOLEAN, scoreDims, scoreStrides, true, false));
            t.add(new TensorSpec(masked, f32, scoreDims, scoreStrides, true, false));
            ops.add(new PointwiseOp(FfmCudnn.PW_GEN_INDEX, f32, 2, last, 0, 0, row));
            ops.add(new PointwiseOp(FfmCudnn.PW_GEN_INDEX, f32, 3, last, 0, 0, col));
            ops.add(new PointwiseOp(FfmCudnn.PW_CMP_GE, FfmCudnn.DATA_BOOLEAN, -1, row, col, 0, keep)); // j <= i
            ops.add(new PointwiseOp(FfmCudnn.PW_BINARY_SELECT, f32, -1, last, UID_NEG_INF, keep, masked));
            last = masked;
        }
        long max = next++, sub = next++, exp = next++, sum = next++, prob = next++;
        t.add(new TensorSpec(max, f32, rowDims, rowStrides, true, false));
        t.add(new TensorSpec(sub, f32, scoreDims, scoreStrides, true, false));
        t.add(new TensorSpec(exp, f32, scoreDims, scoreStrides, true, false));
        t.add(new TensorSpec(sum, f32, rowDims, rowStrides, true, false));
        t.add(new TensorSpec(prob, io, scoreDims, scoreStrides, true, false));
        ops.add(new ReductionOp(FfmCudnn.REDUCE_MAX, last, max));
        ops.add(new PointwiseOp(FfmCudnn.PW_SUB, f32, -1, last, max, 0, sub));
        ops.add(new PointwiseOp(FfmCudnn.PW_EXP, f32, -1, sub, 0, 0, exp));
        ops.add(new ReductionOp(FfmCudnn.REDUCE_ADD, exp, sum));
        ops.add(new PointwiseOp(FfmCudnn.PW_DIV, f32, -1, exp, sum, 0, prob));
        ops.add(new MatmulOp(prob, UID_V, UID_O));
        return new Graph(k, List.copyOf(t), List.copyOf(ops));
    }

    /**
     * Creates and finalizes every tensor and operation descriptor of {@code g} (none of them needs a handle or a
     * device); returns the operation nodes in order. Every descriptor created goes to {@code owned} (destroy them).
     */
    static List<MemorySegment> operations(FfmCudnn lib, Graph g, List<MemorySegment> owned) {
        Map<Long, MemorySegment> tensors = new HashMap<>();
        for (TensorSpec t : g.tensors()) {
            MemorySegment desc = lib.create(FfmCudnn.TENSOR_DESCRIPTOR);
            owned.add(desc);
            lib.setEnum(desc, FfmCudnn.ATTR_TENSOR_DATA_TYPE, FfmCudnn.TYPE_DATA_TYPE, t.dtype());
            lib.setLongs(desc, FfmCudnn.ATTR_TENSOR_DIMENSIONS, t.dims());
            lib.setLongs(desc, FfmCudnn.ATTR_TENSOR_STRIDES, t.strides());
            lib.setLongs(desc, FfmCudnn.ATTR_TENSOR_UNIQUE_ID, t.uid());
            lib.setLongs(desc, FfmCudnn.ATTR_TENSOR_BYTE_ALIGNMENT, 16);
            lib.setBool(desc, FfmCudnn.ATTR_TENSOR_IS_VIRTUAL, t.virtual());
            if (t.byValue()) lib.setBool(desc, FfmCudnn.ATTR_TENSOR_IS_BY_VALUE, true);
            lib.finalize(desc, "tensor " + t.uid());
            tensors.put(t.uid(), desc);
        }
        Function<Long, MemorySegment> td = tensors::get;
        List<MemorySegment> out = new ArrayList<>();
        int i = 0;
        for (OpSpec op : g.ops()) {
            String what = "operation " + i++ + " " + op.getClass().getSimpleName();
            MemorySegment node;
            switch (op) {
                case MatmulOp m -> {
                    MemorySegment desc = lib.create(FfmCudnn.MATMUL_DESCRIPTOR);
                    owned.add(desc);
                    lib.setEnum(desc, FfmCudnn.ATTR_MATMUL_COMP_TYPE, FfmCudnn.TYPE_DATA_TYPE, FfmCudnn.DATA_FLOAT);
                    lib.finalize(desc, what + " descriptor");
                    node = lib.create(FfmCudnn.OPERATION_MATMUL_DESCRIPTOR);
                    owned.add(node);
                    lib.setDescs(node, FfmCudnn.ATTR_OPERATION_MATMUL_ADESC, td.apply(m.a()));
                    lib.setDescs(node, FfmCudnn.ATTR_OPERATION_MATMUL_BDESC, td.apply(m.b()));
                    lib.setDescs(node, FfmCudnn.ATTR_OPERATION_MATMUL_CDESC, td.apply(m.c()));
                    lib.setDescs(node, FfmCudnn.ATTR_OPERATION_MATMUL_DESC, desc);
                }
                case PointwiseOp p -> {
                    MemorySegment desc = lib.create(FfmCudnn.POINTWISE_DESCRIPTOR);
                    owned.add(desc);
                    lib.setEnum(desc, FfmCudnn.ATTR_POINTWISE_MODE, FfmCudnn.TYPE_POINTWISE_MODE, p.mode());
                    lib.setEnum(desc, FfmCudnn.ATTR_POINTWISE_MATH_PREC, FfmCudnn.TYPE_DATA_TYPE, p.prec());
                    if (p.axis() >= 0) lib.setLongs(desc, FfmCudnn.ATTR_POINTWISE_AXIS, p.axis());
                    lib.finalize(desc, what + " descriptor");
                    node = lib.create(FfmCudnn.OPERATION_POINTWISE_DESCRIPTOR);
                    owned.add(node);
                    lib.setDescs(node, FfmCudnn.ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, desc);
                    lib.setDescs(node, FfmCudnn.ATTR_OPERATION_POINTWISE_XDESC, td.apply(p.x()));
                    if (p.b() != 0) lib.setDescs(node, FfmCudnn.ATTR_OPERATION_POINTWISE_BDESC, td.apply(p.b()));
                    if (p.t() != 0) lib.setDescs(node, FfmCudnn.ATTR_OPERATION_POINTWISE_TDESC, td.apply(p.t()));
                    lib.setDescs(node, FfmCudnn.ATTR_OPERATION_POINTWISE_YDESC, td.apply(p.y()));
                }
                case ReductionOp r -> {
                    MemorySegment desc = lib.create(FfmCudnn.REDUCTION_DESCRIPTOR);
                    owned.add(desc);
                    lib.setEnum(desc, FfmCudnn.ATTR_REDUCTION_OPERATOR, FfmCudnn.TYPE_REDUCTION_OPERATOR_TYPE, r.op());
                    lib.setEnum(desc, FfmCudnn.ATTR_REDUCTION_COMP_TYPE, FfmCudnn.TYPE_DATA_TYPE, FfmCudnn.DATA_FLOAT);
                    lib.finalize(desc, what + " descriptor");
                    node = lib.create(FfmCudnn.OPERATION_REDUCTION_DESCRIPTOR);
                    owned.add(node);
                    lib.setDescs(node, FfmCudnn.ATTR_OPERATION_REDUCTION_XDESC, td.apply(r.x()));
                    lib.setDescs(node, FfmCudnn.ATTR_OPERATION_REDUCTION_YDESC, td.apply(r.y()));
                    lib.setDescs(node, FfmCudnn.ATTR_OPERATION_REDUCTION_DESC, desc);
                }
            }
            lib.finalize(node, what);
            out.add(node);
        }
        return out;
    }

    /** A built plan: its descriptors (destroyed on close), the plan itself and its workspace bytes. */
    private record Plan(List<MemorySegment> owned, MemorySegment plan, long workspace) {}

    private final FfmCudnn lib;
    private final MemorySegment handle;
    private final Map<Key, Plan> plans = new HashMap<>();
    private final Map<Key, String> refused = new HashMap<>();
    private final Set<String> warned = new HashSet<>();
    private final String description;
    private boolean closed;

    private CudnnAttention(FfmCudnn lib, MemorySegment handle) {
        this.lib = lib;
        this.handle = handle;
        this.description =
                "cuDNN " + FfmCudnn.versionString(lib.version) + " fused SDPA via java.lang.foreign (" + lib.where
                        + ") for bf16 (D <= 128, a multiple of 8) and fp16 (D 64, 128), no mask or causal; flash otherwise";
    }

    /** What the backend description says of this path. */
    public String description() {
        return description;
    }

    /**
     * One line for {@code attn probe}: the cuDNN {@code attention=cudnn} would use (version, where), or why none. Loads
     * the library and checks its engine libraries; creates no handle.
     */
    static String probeLine(Map<String, String> extra) {
        FfmCudnn.Located found = FfmCudnn.locate(extra);
        if (found.lib() == null) return "none, so attention=cudnn runs flash: " + found.notFound();
        FfmCudnn lib = found.lib();
        String why = FfmCudnn.versionUnsupported(lib.version);
        if (why == null) why = lib.enginesMissing(lib.file);
        return FfmCudnn.versionString(lib.version) + " at " + lib.where
                + (why == null ? "" : "; attention=cudnn runs flash: " + why);
    }

    /**
     * The cuDNN path for a backend on {@code stream} (the caller holds its lock, with the context current), or null
     * with one line in {@code notes} saying why it is not available (library absent, too old, no handle).
     */
    static CudnnAttention open(Map<String, String> extra, RawStream stream, List<String> notes) {
        return open(extra, System::getenv, stream, notes);
    }

    static CudnnAttention open(
            Map<String, String> extra, Function<String, String> env, RawStream stream, List<String> notes) {
        String why;
        try {
            FfmCudnn.Located found = FfmCudnn.locate(extra, env);
            if (found.lib() == null) why = found.notFound();
            else {
                FfmCudnn lib = found.lib();
                why = FfmCudnn.versionUnsupported(lib.version);
                if (why == null) why = lib.enginesMissing(lib.file);
                if (why == null) {
                    if (stream == null) why = "no device (cuDNN " + FfmCudnn.versionString(lib.version) + " found)";
                    else {
                        MemorySegment h = lib.createHandle();
                        try {
                            lib.setStream(h, stream.address());
                        } catch (RuntimeException e) {
                            lib.destroyHandle(h);
                            throw e;
                        }
                        return new CudnnAttention(lib, h);
                    }
                }
            }
        } catch (AttnException | LinkageError e) {
            why = e.getMessage();
        }
        notes.add("attention=cudnn unavailable, flash runs: " + why);
        return null;
    }

    /**
     * Runs {@code node} through cuDNN into y, or returns false when this path does not take it ({@link #unsupported})
     * or cuDNN refused its plan or its execution (reported once; nothing of cuDNN's is queued then, at most the 16-bit
     * conversions into scratch); the caller then runs the flash path, which writes all of y. {@code
     * scratch}: {@link #scratch} floats planned by the executor, or null (then from the pool).
     */
    public boolean run(
            CudaStream st,
            Precision precision,
            int capability,
            Node node,
            CudaBuffer y,
            CudaBuffer[] x,
            CudaBuffer scratch) {
        if (closed) throw new IllegalStateException("cuDNN attention is closed");
        if (unsupported(precision, capability, node) != null) return false;
        Key k = key(precision, node);
        Plan plan = plan(k);
        if (plan == null) return false;
        long need = scratch(node);
        CudaBuffer buf = scratch != null && scratch.capacity() >= need && (scratch.address() & 15) == 0
                ? scratch
                : st.scratch(need);
        CudaBuffer ws = plan.workspace() > 0 ? st.scratch((plan.workspace() + 3) / 4) : null;
        try (Arena a = Arena.ofConfined()) {
            Kernel convert = k.bf16() ? Kernel.F32_TO_BF16 : Kernel.F32_TO_F16;
            long nq = (long) k.b() * k.h() * k.l() * k.d(), nk = (long) k.b() * k.hkv() * k.s() * k.d();
            long q16 = buf.address(), k16 = q16 + 2 * nq, v16 = k16 + 2 * nk, o16 = v16 + 2 * nk;
            long[] at = {q16, k16, v16}, n = {nq, nk, nk};
            for (int i = 0; i < 3; i++)
                st.launch(
                        convert,
                        Attention.convertBlocks(n[i]),
                        1,
                        1,
                        Attention.CONVERT_THREADS,
                        CudaStream.args(x[i]).ptr(at[i]).i64(n[i]));
            float scale = node.params(OpParams.Attention.class).scale();
            MemorySegment scaleHost = FfmCudnn.hostFloat(a, scale),
                    negInf = FfmCudnn.hostFloat(a, negativeInfinity(lib.version));
            MemorySegment pack = lib.create(FfmCudnn.VARIANT_PACK_DESCRIPTOR);
            try {
                if (k.causal()) {
                    lib.setLongs(
                            pack,
                            FfmCudnn.ATTR_VARIANT_PACK_UNIQUE_IDS,
                            UID_Q,
                            UID_K,
                            UID_V,
                            UID_O,
                            UID_SCALE,
                            UID_NEG_INF);
                    lib.setPointers(
                            pack,
                            FfmCudnn.ATTR_VARIANT_PACK_DATA_POINTERS,
                            q16,
                            k16,
                            v16,
                            o16,
                            scaleHost.address(),
                            negInf.address());
                } else {
                    lib.setLongs(pack, FfmCudnn.ATTR_VARIANT_PACK_UNIQUE_IDS, UID_Q, UID_K, UID_V, UID_O, UID_SCALE);
                    lib.setPointers(
                            pack, FfmCudnn.ATTR_VARIANT_PACK_DATA_POINTERS, q16, k16, v16, o16, scaleHost.address());
                }
                lib.setPointers(pack, FfmCudnn.ATTR_VARIANT_PACK_WORKSPACE, ws == null ? 0L : ws.address());
                lib.finalize(pack, "variant pack");
                lib.execute(handle, plan.plan(), pack);
            } catch (AttnException e) { // nothing of cuDNN's was queued: this shape goes to the flash path from now on
                plans.remove(k);
                for (MemorySegment d : plan.owned().reversed()) lib.destroy(d);
                refuse(k, e.getMessage());
                return false;
            } finally {
                lib.destroy(pack);
            }
            Kernel widen = k.bf16() ? Kernel.BF16_TO_F32 : Kernel.F16_TO_F32;
            st.launch(
                    widen,
                    Attention.convertBlocks(nq),
                    1,
                    1,
                    Attention.CONVERT_THREADS,
                    new KernelArgs().ptr(o16).ptr(y).i64(nq));
        } finally {
            if (ws != null) ws.close(); // to the pool; later users are queued after this work
            if (buf != scratch) buf.close();
        }
        return true;
    }

    /** cudnn-frontend's masking value: -inf from 9.10 on, the lowest float before (older engines prefer it). */
    static float negativeInfinity(long version) {
        return version >= 91000 ? Float.NEGATIVE_INFINITY : -Float.MAX_VALUE;
    }

    /** The cached plan of {@code k}, built on first use; null when cuDNN refuses it (warned once). */
    private Plan plan(Key k) {
        Plan p = plans.get(k);
        if (p != null) return p;
        if (refused.containsKey(k)) return null;
        List<MemorySegment> owned = new ArrayList<>();
        try {
            p = build(k, owned);
            plans.put(k, p);
            return p;
        } catch (RuntimeException e) { // AttnException from cuDNN; anything else is reported the same way
            for (MemorySegment d : owned.reversed()) lib.destroy(d);
            refuse(k, e.getMessage());
            return null;
        }
    }

    /** Records that {@code k} runs the flash path, and says so once (one warning line per shape). */
    private void refuse(Key k, String why) {
        refused.put(k, why);
        String line = "attention=cudnn: no cuDNN plan for " + k + ", flash runs it: " + why;
        if (warned.add(line)) LOG.log(System.Logger.Level.WARNING, line);
    }

    /** Why cuDNN refused {@code k}'s plan, or null (built, or not tried). */
    String refusal(Key k) {
        return refused.get(k);
    }

    private Plan build(Key k, List<MemorySegment> owned) {
        List<MemorySegment> ops = operations(lib, graph(k), owned);
        MemorySegment opGraph = lib.create(FfmCudnn.OPERATIONGRAPH_DESCRIPTOR);
        owned.add(opGraph);
        lib.setHandle(opGraph, FfmCudnn.ATTR_OPERATIONGRAPH_HANDLE, handle);
        lib.setDescs(opGraph, FfmCudnn.ATTR_OPERATIONGRAPH_OPS, ops.toArray(MemorySegment[]::new));
        lib.finalize(opGraph, "operation graph");
        List<String> tried = new ArrayList<>();
        for (int mode : new int[] {FfmCudnn.HEUR_MODE_A, FfmCudnn.HEUR_MODE_FALLBACK}) {
            String label = mode == FfmCudnn.HEUR_MODE_A ? "heuristics mode A" : "heuristics fallback mode";
            MemorySegment heur = lib.create(FfmCudnn.ENGINEHEUR_DESCRIPTOR);
            owned.add(heur);
            List<MemorySegment> cfgs;
            try {
                lib.setDescs(heur, FfmCudnn.ATTR_ENGINEHEUR_OPERATION_GRAPH, opGraph);
                lib.setEnum(heur, FfmCudnn.ATTR_ENGINEHEUR_MODE, FfmCudnn.TYPE_HEUR_MODE, mode);
                lib.finalize(heur, label);
                cfgs = lib.heuristicResults(heur, 8);
            } catch (AttnException e) {
                tried.add(label + ": " + e.getMessage());
                continue;
            }
            owned.addAll(cfgs);
            if (cfgs.isEmpty()) tried.add(label + ": no engine configuration");
            for (MemorySegment cfg : cfgs) {
                MemorySegment plan = lib.create(FfmCudnn.EXECUTION_PLAN_DESCRIPTOR);
                try {
                    lib.setHandle(plan, FfmCudnn.ATTR_EXECUTION_PLAN_HANDLE, handle);
                    lib.setDescs(plan, FfmCudnn.ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg);
                    lib.finalize(plan, "execution plan");
                    long ws = lib.getLong(plan, FfmCudnn.ATTR_EXECUTION_PLAN_WORKSPACE_SIZE);
                    owned.add(plan);
                    return new Plan(List.copyOf(owned), plan, ws);
                } catch (AttnException e) {
                    lib.destroy(plan);
                    tried.add(label + " configuration: " + e.getMessage());
                }
            }
        }
        throw new AttnException(AttnException.Code.INTERNAL, String.join("; ", tried));
    }

    /** Destroys the plans and the handle (the caller holds the stream lock, the context current). */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        for (Plan p : plans.values()) for (MemorySegment d : p.owned().reversed()) lib.destroy(d);
        plans.clear();
        lib.destroyHandle(handle);
    }
}
