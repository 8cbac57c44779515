package io.attn.cuda;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.backend.Buffer;
import io.attn.backend.Precision;
import io.attn.graph.MaskKind;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.tensor.DType;
import io.attn.tensor.Shape;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The CUDA backend: our PTX kernels ({@code kernels} module) for every op, a {@link Blas} for MATMUL and for the two
 * products of unfused attention, device memory from a caching {@link DevicePool}.
 *
 * <p><b>Threads.</b> The backend owns one stream. Every public method takes one lock, makes the primary context
 * current on the calling thread, queues its work on the stream and releases the lock; {@link #upload} and {@link
 * #download} also wait for the stream. So work from concurrent requests is serialised in stream order: correct
 * (buffers of different requests never overlap, and a pooled block reused by a later request is only touched by
 * work queued after its earlier users), but one backend runs one op at a time. For more throughput, open one backend
 * per GPU stream.
 *
 * <p><b>Attention.</b> Option {@code attention}: {@code flash} (default) runs {@code flash_attention.cu} when D is
 * 32, 64 or 128 and Dv == D, and GEMM -> masked softmax -> GEMM otherwise; {@code fused} runs {@code attention.cu}
 * (one warp per query) when D, Dv <= 128; {@code unfused} always takes the GEMM path. With precision BF16 / FP16 on
 * a device of compute capability 8.0+, flash uses the tensor-core kernels of {@code flash_attention_bf16.cu} for D =
 * 64 / 128 ({@link #flashEntry}).
 *
 * <p><b>Limits.</b> F32 tensors only ({@link #supports} says no to anything else). Precision FP32 (default, exact
 * fp32 kernels and SGEMM), TF32 (cuBLAS GEMMs on TF32 tensor cores; kernels fp32), BF16 / FP16 (cuBLAS GEMMs with
 * 16-bit tensor-core inputs and fp32 accumulation, 16-bit flash attention; needs compute capability 8.0). Kernel
 * errors surface at the next synchronising call, named after the last queued op.
 */
public final class CudaBackend implements Backend {
    static final String ATTENTION_OPTION = "attention";
    private static final int THREADS = 256, MAX_BLOCKS = 65535, FUSED_MAX_D = 128;
    /** Query rows per block of the fp32 and the 16-bit flash kernels (their headers). */
    static final int FLASH_F32_ROWS = 32, FLASH_16_ROWS = 64;

    /** Which attention kernel the {@code attention} option asks for. */
    enum AttentionPath {
        FLASH,
        FUSED,
        UNFUSED;

        static AttentionPath parse(String option) {
            String v = option == null ? "flash" : option.trim().toLowerCase(Locale.ROOT);
            return switch (v) {
                case "flash" -> FLASH;
                case "fused" -> FUSED;
                case "unfused" -> UNFUSED;
                default -> throw AttnException.badInput("option attention=" + v + ": expected flash, fused or unfused");
            };
        }
    }

    private final ReentrantLock lock = new ReentrantLock();
    private final CudaContext ctx;
    private final DevicePool pool;
    private final KernelModule kernels;
    private final Blas blas;
    private final OpSink sink;
    private final AttentionPath attentionPath;
    private final Precision precision;
    private final int capability;
    private final String description;
    private String lastOp = "nothing";
    private boolean closed;

    private CudaBackend(
            CudaContext ctx,
            DevicePool pool,
            KernelModule kernels,
            Blas blas,
            BackendOptions options,
            List<String> notes) {
        this.ctx = ctx;
        this.pool = pool;
        this.kernels = kernels;
        this.blas = blas;
        this.sink = new DriverSink(ctx, pool, new DriverLauncher(kernels, ctx.stream()));
        this.attentionPath = AttentionPath.parse(options.extra().get(ATTENTION_OPTION));
        this.precision = options.precision();
        this.capability = ctx.info.ccMajor() * 10 + ctx.info.ccMinor();
        this.description = "cuda: " + ctx.info.describe() + "; precision "
                + precision.name().toLowerCase(Locale.ROOT)
                + "; gemm: " + blas.description() + "; attention: "
                + attentionPath.name().toLowerCase(Locale.ROOT)
                + (notes.isEmpty() ? "" : " (" + String.join("; ", notes) + ")");
    }

    /**
     * A backend with no device behind it: ops go to {@code sink} and {@code blas} (tests without a GPU); {@code
     * capability} is the compute capability it pretends to have (major * 10 + minor).
     */
    CudaBackend(OpSink sink, Blas blas, String attention, Precision precision, int capability) {
        this.ctx = null;
        this.pool = null;
        this.kernels = null;
        this.blas = blas;
        this.sink = sink;
        this.attentionPath = AttentionPath.parse(attention);
        this.precision = precision;
        this.capability = capability;
        this.description = "cuda (no device: test sink)";
    }

    /** Opens device {@code cuda.device} (default 0) with the given options. */
    static CudaBackend open(BackendOptions options) {
        AttentionPath.parse(options.extra().get(ATTENTION_OPTION)); // a bad option fails before any native work
        String noDriver = CudaProbe.driverMissing();
        if (noDriver != null) throw new AttnException(AttnException.Code.DEVICE_UNAVAILABLE, noDriver);
        String bindings = CudaProbe.loadBindings();
        if (bindings != null) throw new AttnException(AttnException.Code.DEVICE_UNAVAILABLE, bindings);
        DeviceInfo info = DeviceInfo.query(CudaProbe.ordinal(options));
        String unsupported = info.unsupportedReason();
        if (unsupported != null) throw new AttnException(AttnException.Code.DEVICE_UNAVAILABLE, unsupported);
        String noPrecision = precisionUnsupported(options.precision(), info.ccMajor() * 10 + info.ccMinor());
        if (noPrecision != null) throw new AttnException(AttnException.Code.DEVICE_UNAVAILABLE, noPrecision);
        CudaContext ctx = new CudaContext(info);
        DevicePool pool = null;
        KernelModule kernels = null;
        Blas blas = null;
        try {
            pool = new DevicePool(ctx);
            kernels = new KernelModule();
            kernels.loadAll(info.ccMajor() * 10 + info.ccMinor());
            List<String> notes = new ArrayList<>();
            blas = GemmPaths.open(
                    options.extra(),
                    new DriverLauncher(kernels, ctx.stream()),
                    ctx.stream(),
                    options.precision(),
                    notes);
            return new CudaBackend(ctx, pool, kernels, blas, options, notes);
        } catch (RuntimeException | Error e) {
            if (blas != null) blas.close();
            if (kernels != null) kernels.close();
            if (pool != null) pool.close();
            ctx.close();
            throw e;
        }
    }

    /** Null when the device (compute capability major * 10 + minor) can run {@code precision}, else why not. */
    static String precisionUnsupported(Precision precision, int capability) {
        boolean sixteen = precision == Precision.BF16 || precision == Precision.FP16;
        if (sixteen && capability < 80)
            return "cuda: precision " + precision.name().toLowerCase(Locale.ROOT)
                    + " needs compute capability 8.0 or newer (this device has " + capability / 10 + "."
                    + capability % 10 + "); use fp32 or tf32";
        return null;
    }

    /**
     * The flash-attention entry for head dims {@code d}, {@code dv} at {@code precision} on a device of compute
     * capability {@code capability}, or null when no flash kernel applies (then the unfused path runs): the 16-bit
     * tensor-core kernels for BF16 / FP16 when capability >= 80, D is 64 or 128 and every pointer is 8-byte aligned
     * ({@code aligned8}); otherwise the fp32 kernel when D is 32, 64 or 128; always Dv == D.
     */
    static String flashEntry(Precision precision, int capability, int d, int dv, boolean aligned8) {
        if (dv != d) return null;
        boolean sixteen = precision == Precision.BF16 || precision == Precision.FP16;
        if (sixteen && capability >= 80 && aligned8 && (d == 64 || d == 128))
            return (precision == Precision.BF16 ? "flash_bf16_d" : "flash_f16_d") + d;
        return d == 32 || d == 64 || d == 128 ? "flash_f32_d" + d : null;
    }

    @Override
    public String name() {
        return "cuda";
    }

    @Override
    public String description() {
        return description;
    }

    /** Device memory the pool holds (in use plus cached), for tests and diagnostics. */
    long deviceBytes() {
        return pool == null ? 0 : pool.allocatedBytes();
    }

    @Override
    public boolean supports(Node node) {
        if (node.dtype() != DType.F32) return false;
        // ragged batches (sequences laid one after another) have no kernel yet: callers pad instead
        if (node.op() == io.attn.graph.Op.ATTENTION
                && node.params(OpParams.Attention.class).mask().segmented()) return false;
        for (Node in : node.inputs()) if (in.dtype() != DType.F32) return false;
        return true;
    }

    @Override
    public Buffer allocate(DType dtype, long elements) {
        if (elements < 0) throw new IllegalArgumentException("negative buffer size " + elements);
        enter();
        try {
            return sink.allocate(dtype, elements);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void release(Buffer buffer) {
        if (buffer instanceof CudaBuffer b && b.ownedBy(pool)) b.close();
    }

    @Override
    public void upload(float[] src, int count, Buffer dst) {
        CudaBuffer d = dev(dst, count, "upload");
        if (count > src.length) throw new IllegalArgumentException("upload of " + count + " from " + src.length);
        if (count == 0) return;
        enter();
        try {
            sink.upload(src, count, d);
            lastOp = "upload";
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void download(Buffer src, float[] dst, int count) {
        CudaBuffer s = dev(src, count, "download");
        if (count > dst.length) throw new IllegalArgumentException("download of " + count + " into " + dst.length);
        if (count == 0) return;
        enter();
        try {
            sink.download(s, dst, count, lastOp);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void synchronize() {
        enter();
        try {
            sink.sync(lastOp);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void execute(Node node, Buffer out, Buffer[] inputs) {
        CudaBuffer y = dev(out, node.shape().size(), node.toString());
        CudaBuffer[] x = new CudaBuffer[inputs.length];
        for (int i = 0; i < inputs.length; i++)
            x[i] = dev(inputs[i], node.input(i).shape().size(), node.toString());
        enter();
        try {
            lastOp = node + " " + node.op();
            run(node, y, x);
        } finally {
            lock.unlock();
        }
    }

    /** The one exhaustive switch over the ops (no default: a new Op breaks this build until handled). */
    private void run(Node node, CudaBuffer y, CudaBuffer[] x) {
        Shape s = node.shape();
        int n = s.size();
        switch (node.op()) {
            case INPUT, CONSTANT -> throw new IllegalStateException("leaf " + node + " is not executed");
            case MATMUL -> matmul(node, y, x);
            case ADD_BIAS ->
                elementwise(
                        "bias_act",
                        "bias_act_f32",
                        n,
                        args(x[0], x[1], y).i32(n).i32(s.dim(-1)).i32(0));
            case ADD -> elementwise("add", "add_f32", n, args(x[0], x[1], y).i32(n));
            case SCALE ->
                elementwise(
                        "add",
                        "scale_f32",
                        n,
                        args(x[0], y)
                                .i32(n)
                                .f32(node.params(OpParams.Scale.class).factor()));
            case SOFTMAX -> {
                var p = node.params(OpParams.Softmax.class);
                CudaBuffer scores = x[0];
                if (p.product()) { // the weights: q k^T into y, then the softmax in place on it
                    Shape sq = node.input(0).shape();
                    int l = sq.dim(-2), d = sq.dim(-1), keys = s.dim(-1);
                    gemm(
                            false,
                            true,
                            l,
                            keys,
                            d,
                            1f,
                            x[0],
                            d,
                            (long) l * d,
                            x[1],
                            d,
                            (long) keys * d,
                            y,
                            sq.leading(2));
                    scores = y;
                }
                if (p.mask().any())
                    softmax(
                            scores,
                            y,
                            s.dim(0),
                            s.dim(1),
                            s.dim(2),
                            s.dim(3),
                            p.scale(),
                            p.mask(),
                            node,
                            x,
                            p.firstMask());
                else softmax(scores, y, 1, 1, s.leading(1), s.dim(-1), p.scale(), p.mask(), node, x, p.firstMask());
            }
            case LAYER_NORM -> {
                var p = node.params(OpParams.LayerNorm.class);
                int e = s.dim(-1), rows = s.leading(1);
                CudaBuffer w = p.hasWeight() ? x[1] : null;
                CudaBuffer b = p.hasBias() ? x[p.hasWeight() ? 2 : 1] : null;
                if (rows > 0 && e > 0)
                    launch(
                            "layer_norm",
                            "layer_norm_f32",
                            rows,
                            1,
                            1,
                            rowThreads(e),
                            args(x[0], y, w, b).i32(e).f32(p.eps()));
            }
            case RELU ->
                elementwise(
                        "bias_act",
                        "bias_act_f32",
                        n,
                        args(x[0], null, y).i32(n).i32(1).i32(1));
            case GELU -> {
                int act = node.params(OpParams.Gelu.class).tanh() ? 3 : 2;
                elementwise(
                        "bias_act",
                        "bias_act_f32",
                        n,
                        args(x[0], null, y).i32(n).i32(1).i32(act));
            }
            case EMBEDDING -> embedding(node, y, x[0], x[1]);
            case POSITIONAL_ENCODING ->
                elementwise(
                        "positional_encoding",
                        "positional_encoding_f32",
                        n,
                        args(x[0], y)
                                .i32(s.dim(0))
                                .i32(s.dim(1))
                                .i32(s.dim(2))
                                .i32(node.params(OpParams.PositionalEncoding.class)
                                        .offset()));
            case SPLIT_HEADS ->
                elementwise( // out (B, H, L, D)
                        "heads",
                        "split_heads_f32",
                        n,
                        args(x[0], y).i32(s.dim(0)).i32(s.dim(2)).i32(s.dim(1)).i32(s.dim(3)));
            case MERGE_HEADS -> {
                Shape in = node.input(0).shape(); // (B, H, L, D)
                elementwise(
                        "heads",
                        "merge_heads_f32",
                        n,
                        args(x[0], y)
                                .i32(in.dim(0))
                                .i32(in.dim(1))
                                .i32(in.dim(2))
                                .i32(in.dim(3)));
            }
            case CONCAT -> concat(node, y, x);
            case MEAN -> {
                Shape in = node.input(0).shape();
                int ax = node.params(OpParams.Mean.class).axis();
                int outer = 1, inner = 1;
                for (int i = 0; i < ax; i++) outer *= in.dim(i);
                for (int i = ax + 1; i < in.rank(); i++) inner *= in.dim(i);
                elementwise(
                        "mean",
                        "mean_f32",
                        n,
                        args(x[0], y).i32(outer).i32(in.dim(ax)).i32(inner));
            }
            case ATTENTION -> attention(node, y, x);
            case CACHE_WRITE -> {
                Shape c = node.input(0).shape();
                int l = node.input(1).shape().dim(2);
                boolean inPlace = y.ptr().address() == x[0].ptr().address();
                long total = (long) c.dim(0) * c.dim(1) * (inPlace ? l : c.dim(2)) * c.dim(3);
                elementwise(
                        "cache",
                        "cache_write_f32",
                        total,
                        args(x[0], x[1], x[2], y)
                                .i32(c.dim(0) * c.dim(1))
                                .i32(c.dim(2))
                                .i32(l)
                                .i32(c.dim(3))
                                .i32(inPlace ? 0 : 1));
            }
        }
    }

    private void matmul(Node node, CudaBuffer y, CudaBuffer[] x) {
        var p = node.params(OpParams.MatMul.class);
        CudaBuffer a = x[0], b = x[1];
        Shape sa = node.input(0).shape(), sb = node.input(1).shape();
        int m = p.transA() ? sa.dim(-1) : sa.dim(-2);
        int k = p.transA() ? sa.dim(-2) : sa.dim(-1);
        int n = p.transB() ? sb.dim(-2) : sb.dim(-1);
        int batch = sa.leading(2);
        boolean sharedB = sb.rank() == 2;
        long strideA = (long) sa.dim(-2) * sa.dim(-1), strideB = sharedB ? 0 : (long) sb.dim(-2) * sb.dim(-1);
        if (sharedB && !p.transA() && batch > 1) { // (batch, M, K) . (K, N) is one (batch*M, K) . (K, N)
            m *= batch;
            batch = 1;
        }
        int size = node.shape().size();
        // with a heads layout the product goes to a scratch buffer first, then split into heads into y
        CudaBuffer c = p.heads() > 0 ? (CudaBuffer) sink.allocate(DType.F32, size) : y;
        try {
            gemm(p.transA(), p.transB(), m, n, k, p.alpha(), a, sa.dim(-1), strideA, b, sb.dim(-1), strideB, c, batch);
            // the epilogue, in place on the product (each element is read, then written, by one thread)
            if (p.bias() || p.relu())
                elementwise(
                        "bias_act",
                        "bias_act_f32",
                        size,
                        args(c, p.bias() ? x[2] : null, c).i32(size).i32(n).i32(p.relu() ? 1 : 0));
            if (p.residual())
                elementwise(
                        "add", "add_f32", size, args(c, x[p.bias() ? 3 : 2], c).i32(size));
            if (p.heads() > 0) {
                Shape s = node.shape(); // (B, H, L, D)
                elementwise(
                        "heads",
                        "split_heads_f32",
                        size,
                        args(c, y).i32(s.dim(0)).i32(s.dim(2)).i32(s.dim(1)).i32(s.dim(3)));
            }
        } finally {
            if (c != y) c.close(); // back to the pool; later users are queued after these kernels on the same stream
        }
    }

    /** Row-major strided batched GEMM into c (beta 0); k == 0 gives zeros. */
    private void gemm(
            boolean ta,
            boolean tb,
            int m,
            int n,
            int k,
            float alpha,
            CudaBuffer a,
            int lda,
            long strideA,
            CudaBuffer b,
            int ldb,
            long strideB,
            CudaBuffer c,
            int batch) {
        if ((long) m * n * batch == 0) return;
        if (k == 0) {
            sink.zero(c.ptr(), (long) m * n * batch);
            return;
        }
        blas.sgemm(
                ta,
                tb,
                m,
                n,
                k,
                alpha,
                a.ptr(),
                lda,
                strideA,
                b.ptr(),
                ldb,
                strideB,
                0f,
                c.ptr(),
                n,
                (long) m * n,
                batch);
    }

    /** softmax_f32 over rows of S; masks come from the node's inputs starting at {@code firstMask}. */
    private void softmax(
            CudaBuffer x,
            CudaBuffer y,
            int b,
            int h,
            int l,
            int s,
            float scale,
            MaskSpec spec,
            Node node,
            CudaBuffer[] in,
            int firstMask) {
        long rows = (long) b * h * l;
        if (rows == 0 || s == 0) return;
        Masks mk = masks(spec, node, in, firstMask, l, s);
        launch(
                "softmax",
                "softmax_f32",
                (int) rows,
                1,
                1,
                rowThreads(s),
                args(x, y)
                        .i32(h)
                        .i32(l)
                        .i32(s)
                        .f32(scale)
                        .i32(spec.causal() ? 1 : 0)
                        .then(mk::appendTo));
    }

    /** Mask arguments shared by softmax_f32 and attention_f32. */
    private record Masks(CudaBuffer mask, int maskKind, int strideB, int strideH, CudaBuffer kpm, int kpmKind) {
        /** Appends the kernels' mask parameters, in their order: mask, kind, strides, key padding, its kind. */
        KernelArgs appendTo(KernelArgs a) {
            return a.ptr(mask).i32(maskKind).i32(strideB).i32(strideH).ptr(kpm).i32(kpmKind);
        }
    }

    private static Masks masks(MaskSpec spec, Node node, CudaBuffer[] in, int first, int l, int s) {
        CudaBuffer mask = null, kpm = null;
        int strideB = 0, strideH = 0, i = first;
        if (spec.attnMask() != MaskKind.NONE) {
            Shape ms = node.input(i).shape();
            mask = in[i];
            if (ms.rank() == 4) {
                strideB = ms.dim(0) == 1 ? 0 : ms.dim(1) * l * s;
                strideH = ms.dim(1) == 1 ? 0 : l * s;
            }
            i++;
        }
        if (spec.keyPadding() != MaskKind.NONE) kpm = in[i];
        return new Masks(mask, kind(spec.attnMask()), strideB, strideH, kpm, kind(spec.keyPadding()));
    }

    private static int kind(MaskKind k) {
        return switch (k) {
            case NONE -> 0;
            case BOOL -> 1;
            case ADDITIVE -> 2;
        };
    }

    private void embedding(Node node, CudaBuffer y, CudaBuffer ids, CudaBuffer table) {
        Shape t = node.input(1).shape();
        int n = node.input(0).shape().size(), v = t.dim(0), e = t.dim(1);
        if ((long) n * e == 0) return;
        elementwise(
                "embedding",
                "embedding_f32",
                n * e,
                args(ids, table, y).i32(n).i32(v).i32(e).ptr(sink.errorWord()));
        int err = sink.takeError(node + " EMBEDDING"); // a sync per embedding: the error belongs to this request
        if (err != 0)
            throw AttnException.badInput(
                    "embedding id at flat position " + (err - 1) + " is not an integer in [0, " + v + ")");
    }

    private void concat(Node node, CudaBuffer y, CudaBuffer[] x) {
        Shape out = node.shape();
        int ax = node.params(OpParams.Concat.class).axis();
        int outer = 1, inner = 1;
        for (int i = 0; i < ax; i++) outer *= out.dim(i);
        for (int i = ax + 1; i < out.rank(); i++) inner *= out.dim(i);
        int offset = 0;
        for (int p = 0; p < x.length; p++) {
            int part = node.input(p).shape().dim(ax);
            int srcInner = part * inner;
            elementwise(
                    "concat",
                    "concat_f32",
                    outer * srcInner,
                    args(x[p], y)
                            .i32(outer)
                            .i32(srcInner)
                            .i32(out.dim(ax) * inner)
                            .i32(offset * inner));
            offset += part;
        }
    }

    private void attention(Node node, CudaBuffer y, CudaBuffer[] x) {
        var p = node.params(OpParams.Attention.class);
        Shape q = node.input(0).shape(),
                kv = node.input(1).shape(),
                vs = node.input(2).shape();
        int b = q.dim(0), h = q.dim(1), l = q.dim(2), d = q.dim(3), s = kv.dim(2), dv = vs.dim(3);
        long outN = (long) b * h * l * dv;
        if (outN == 0) return;
        if (s == 0) { // no keys: every row fully masked -> zeros
            sink.zero(y.ptr(), outN);
            return;
        }
        String flash = attentionPath == AttentionPath.FLASH
                ? flashEntry(precision, capability, d, dv, aligned8(x[0], x[1], x[2], y))
                : null;
        if (flash != null) {
            boolean f32 = flash.startsWith("flash_f32");
            int rows = f32 ? FLASH_F32_ROWS : FLASH_16_ROWS;
            long blocks = (long) b * h * ((l + rows - 1) / rows);
            if (blocks <= Integer.MAX_VALUE) {
                Masks mk = masks(p.mask(), node, x, 3, l, s);
                launch(
                        f32 ? "flash_attention" : "flash_attention_bf16",
                        flash,
                        (int) blocks,
                        1,
                        1,
                        128,
                        args(x[0], x[1], x[2], y)
                                .i32(b)
                                .i32(h)
                                .i32(l)
                                .i32(s)
                                .f32(p.scale())
                                .i32(p.mask().causal() ? 1 : 0)
                                .then(mk::appendTo));
                return;
            }
        }
        if (attentionPath == AttentionPath.FUSED && d <= FUSED_MAX_D && dv <= FUSED_MAX_D) {
            Masks mk = masks(p.mask(), node, x, 3, l, s);
            long rows = (long) b * h * l;
            launch(
                    "attention",
                    "attention_f32",
                    (int) ((rows + 3) / 4),
                    1,
                    1,
                    128,
                    args(x[0], x[1], x[2], y)
                            .i32(b)
                            .i32(h)
                            .i32(l)
                            .i32(s)
                            .i32(d)
                            .i32(dv)
                            .f32(p.scale())
                            .i32(p.mask().causal() ? 1 : 0)
                            .then(mk::appendTo));
            return;
        }
        // unfused: scores = Q K^T (B*H batches of L x S), softmax in place with scale and masks, out = P V
        CudaBuffer scores = (CudaBuffer) sink.allocate(DType.F32, (long) b * h * l * s);
        try {
            gemm(false, true, l, s, d, 1f, x[0], d, (long) l * d, x[1], d, (long) s * d, scores, b * h);
            softmax(scores, scores, b, h, l, s, p.scale(), p.mask(), node, x, 3);
            gemm(false, false, l, dv, s, 1f, scores, s, (long) l * s, x[2], dv, (long) s * dv, y, b * h);
        } finally {
            scores.close(); // back to the pool; later users are queued after these kernels on the same stream
        }
    }

    private static boolean aligned8(CudaBuffer... bufs) {
        for (CudaBuffer c : bufs) if ((c.ptr().address() & 7) != 0) return false;
        return true;
    }

    // ---- launching ----

    private KernelArgs args(CudaBuffer... bufs) {
        KernelArgs a = new KernelArgs();
        for (CudaBuffer b : bufs) a.ptr(b);
        return a;
    }

    private static int rowThreads(int cols) {
        return cols >= THREADS ? THREADS : Math.max(32, (cols + 31) / 32 * 32);
    }

    /** A 1-D grid-stride launch over {@code n} elements. */
    private void elementwise(String file, String entry, long n, KernelArgs a) {
        if (n == 0) return;
        int blocks = (int) Math.min((n + THREADS - 1) / THREADS, MAX_BLOCKS);
        launch(file, entry, blocks, 1, 1, THREADS, a);
    }

    private void launch(String file, String entry, int gx, int gy, int gz, int threads, KernelArgs a) {
        sink.launch(file, entry, gx, gy, gz, threads, a);
    }

    private void enter() {
        lock.lock();
        try {
            if (closed) throw new IllegalStateException("cuda backend is closed");
            if (ctx != null) ctx.makeCurrent();
        } catch (RuntimeException e) {
            lock.unlock();
            throw e;
        }
    }

    private CudaBuffer dev(Buffer b, long elements, String what) {
        if (!(b instanceof CudaBuffer c) || !c.ownedBy(pool))
            throw new IllegalArgumentException(what + ": buffer " + b + " does not belong to this cuda backend");
        if (c.capacity() < elements)
            throw new IllegalArgumentException(
                    what + ": buffer holds " + c.capacity() + " elements, needs " + elements);
        return c;
    }

    /** Waits for queued work, then frees the GEMM handle, modules, all device memory and the context; idempotent. */
    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) return;
            closed = true;
            List<Throwable> errors = new ArrayList<>();
            AutoCloseable drain = ctx == null
                    ? null
                    : () -> {
                        ctx.makeCurrent();
                        sink.sync(lastOp);
                    };
            for (AutoCloseable c : new AutoCloseable[] {drain, blas, kernels, pool, ctx}) {
                if (c == null) continue; // a backend made for tests has no device parts
                try {
                    c.close();
                } catch (Throwable t) {
                    errors.add(t);
                }
            }
            if (!errors.isEmpty())
                throw new AttnException(
                        AttnException.Code.INTERNAL,
                        "closing the cuda backend: " + errors.getFirst(),
                        errors.getFirst());
        } finally {
            lock.unlock();
        }
    }
}
