package io.attn.cuda;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.backend.Buffer;
import io.attn.backend.DeviceTimer;
import io.attn.backend.Program;
import io.attn.cuda.ops.Attention;
import io.attn.cuda.ops.CacheWrite;
import io.attn.cuda.ops.Concat;
import io.attn.cuda.ops.Elementwise;
import io.attn.cuda.ops.Embedding;
import io.attn.cuda.ops.Fusions;
import io.attn.cuda.ops.Glu;
import io.attn.cuda.ops.Heads;
import io.attn.cuda.ops.LayerNorm;
import io.attn.cuda.ops.MatMul;
import io.attn.cuda.ops.Mean;
import io.attn.cuda.ops.PositionalEncoding;
import io.attn.cuda.ops.Quantized;
import io.attn.cuda.ops.RmsNorm;
import io.attn.cuda.ops.Rope;
import io.attn.cuda.ops.Softmax;
import io.attn.engine.Precision;
import io.attn.graph.Graph;
import io.attn.graph.Node;
import io.attn.graph.OpParams;
import io.attn.kernels.Kernel;
import io.attn.tensor.DType;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The CUDA backend: our PTX kernels ({@code kernels} module) for every op, a {@link Blas} for MATMUL and for the two
 * products of unfused attention, device memory from a caching {@link DevicePool}. This class keeps the dispatch (one
 * switch over the ops), buffers and the lifecycle; each op family is a class of {@code io.attn.cuda.ops} (as {@code
 * io.attn.cpu.ops} on the CPU side) that queues its kernels on a {@link CudaStream}.
 *
 * <p><b>Threads.</b> The backend owns one stream, and the stream owns one lock ({@link RawStream#lock}). Every public
 * method takes that lock once, makes the primary context current on the calling thread, queues its work on the stream
 * (an op may queue several kernels; the kernel cache and the launches below take no lock of their own) and releases
 * it; {@link #upload} and {@link #download} also wait for the stream. Only the {@link DevicePool} keeps its own
 * monitor, because a buffer may be released from any thread. So work from concurrent requests is serialised in stream order: correct
 * (buffers of different requests never overlap, and a pooled block reused by a later request is only touched by work
 * queued after its earlier users), but one backend runs one op at a time. For more throughput, open one backend per
 * GPU stream.
 *
 * <p><b>Attention.</b> Option {@code attention}: {@code flash} (default), {@code fused}, {@code unfused} or {@code
 * cudnn} (cuDNN's fused SDPA through FFM where it applies, {@link CudnnAttention}; flash elsewhere, and everywhere
 * when the library is absent, older than 9.0 or fails to open, with one line in {@link #description}); {@link
 * Attention} says which kernel each runs. Option {@code flash.variant} names the 16-bit flash entry (bf16 / fp16,
 * {@link Attention#VARIANTS}; default {@link Attention#defaultVariant}), for the GPU sweep; options {@code
 * flash.fp32=tf32x3|simt} (default tf32x3 on compute capability 8.0+) and {@code flash.fp32.variant=ENTRY} pick the
 * fp32 flash kernel ({@link Attention.Fp32Choice}). Option {@code ragged=on|off} ({@link #RAGGED_OPTION}): whether
 * it runs ragged batches (default on).
 *
 * <p><b>Limits.</b> F32 tensors only ({@link #supports} says no to anything else). Precision FP32 (default, exact
 * fp32 kernels and SGEMM), TF32 (cuBLAS GEMMs on TF32 tensor cores; kernels fp32), BF16 / FP16 (cuBLAS GEMMs with
 * 16-bit tensor-core inputs and fp32 accumulation, 16-bit flash attention; needs compute capability 8.0). Kernel
 * errors surface at the next synchronising call, named after the last queued op.
 *
 * <p><b>Weights.</b> {@link #constant} uploads each weight once. At BF16 / FP16 with cuBLAS, the weights that only
 * GEMMs read as their B operand ({@link HalfWeights}: the Linear weights) are held in 16 bits only, and {@link
 * #constantBytes} counts 2 bytes for each of their values; every other weight (layer norms, biases, embedding
 * tables, a tied LM head's table) stays fp32.
 */
public final class CudaBackend implements Backend {
    static final String ATTENTION_OPTION = "attention";

    /**
     * Option {@code ragged}: {@code on} (default) runs ragged batches (their attention in padded groups, {@link
     * Attention#groups}); {@code off} declines them, so the embedder pads its batches (the path before, for an A/B on a
     * GPU).
     */
    static final String RAGGED_OPTION = "ragged";

    /** Whether option {@link #RAGGED_OPTION} leaves ragged batches on. */
    static boolean raggedOn(Map<String, String> extra) {
        String v = extra.get(RAGGED_OPTION);
        if (v == null || v.equals("on")) return true;
        if (v.equals("off")) return false;
        throw AttnException.badInput("option " + RAGGED_OPTION + "=" + v + ": expected on or off");
    }

    private final boolean ragged; // option ragged

    private final ReentrantLock lock; // the stream's
    private final CudaContext ctx;
    private final DevicePool pool;
    private final KernelModule kernels;
    private final Blas blas;
    private final CudnnAttention cudnn; // attention=cudnn when it opened; else null
    private final OpSink sink;
    private final CudaStream stream;
    private final Attention.Path attentionPath;
    private final Kernel flashVariant; // option flash.variant; null: Attention.defaultVariant
    private final Attention.Fp32Choice fp32Flash; // options flash.fp32, flash.fp32.variant
    private final Precision precision;
    private final int capability;
    private final String description;
    private final HalfWeights half; // null: every weight fp32 (precision fp32 / tf32, or no 16-bit GEMM)
    private final Map<CudaBuffer, Long> constants = new IdentityHashMap<>(); // buffers made by constant(), bytes
    private String lastOp = "nothing";
    private boolean closed;

    private CudaBackend(
            CudaContext ctx,
            DevicePool pool,
            KernelModule kernels,
            Blas blas,
            CudnnAttention cudnn,
            BackendOptions options,
            List<String> notes) {
        this.lock = ctx.stream().lock();
        this.ctx = ctx;
        this.pool = pool;
        this.kernels = kernels;
        this.blas = blas;
        this.cudnn = cudnn;
        this.sink = new DriverSink(ctx, pool, new DriverLauncher(kernels, ctx.stream()));
        this.stream = new CudaStream(sink, blas, cudnn);
        this.attentionPath = effectivePath(Attention.Path.parse(options.extra().get(ATTENTION_OPTION)), cudnn);
        this.fp32Flash = Attention.Fp32Choice.parse(options.extra());
        this.ragged = raggedOn(options.extra());
        this.precision = options.precision();
        this.flashVariant = Attention.parseVariant(options.extra().get(Attention.VARIANT_OPTION), precision);
        this.capability = ctx.info.ccMajor() * 10 + ctx.info.ccMinor();
        this.half = halfWeights(precision, blas);
        this.description = "cuda: " + ctx.info.describe() + "; precision "
                + precision.name().toLowerCase(Locale.ROOT)
                + "; gemm: " + blas.description() + weightsNote(precision, half) + "; attention: "
                + attentionPath.name().toLowerCase(Locale.ROOT)
                + (cudnn != null ? " (" + cudnn.description() + ")" : "")
                + (flashVariant != null ? " (" + Attention.VARIANT_OPTION + "=" + flashVariant.entry() + ")" : "")
                + (fp32Flash.equals(Attention.Fp32Choice.DEFAULT)
                        ? ""
                        : ", fp32 "
                                + (fp32Flash.variant() != null
                                        ? fp32Flash.variant().entry()
                                        : fp32Flash.kind().name().toLowerCase(Locale.ROOT)))
                + (notes.isEmpty() ? "" : " (" + String.join("; ", notes) + ")")
                + (ragged ? "" : "; ragged batches off (padded)");
    }

    /**
     * A backend with no device behind it: ops go to {@code sink} and {@code blas} (tests without a GPU); {@code
     * capability} is the compute capability it pretends to have (major * 10 + minor).
     */
    CudaBackend(OpSink sink, Blas blas, String attention, Precision precision, int capability) {
        this(sink, blas, attention == null ? Map.of() : Map.of(ATTENTION_OPTION, attention), precision, capability);
    }

    /** The same with backend options {@code extra} ({@code attention}, {@code flash.variant}, {@code flash.fp32}, {@code
     * flash.fp32.variant}). */
    CudaBackend(OpSink sink, Blas blas, Map<String, String> extra, Precision precision, int capability) {
        this.lock = new RawStream().lock(); // a stream handle never created on a device: only its lock is used
        this.ctx = null;
        this.pool = null;
        this.kernels = null;
        this.blas = blas;
        this.cudnn = null; // cuDNN needs a device: attention=cudnn runs the flash path here, and says why
        this.sink = sink;
        this.stream = new CudaStream(sink, blas);
        Attention.Path asked = Attention.Path.parse(extra.get(ATTENTION_OPTION));
        List<String> notes = new ArrayList<>();
        if (asked == Attention.Path.CUDNN) CudnnAttention.open(extra, null, notes);
        this.attentionPath = effectivePath(asked, null);
        this.fp32Flash = Attention.Fp32Choice.parse(extra);
        this.ragged = raggedOn(extra);
        this.precision = precision;
        this.flashVariant = Attention.parseVariant(extra.get(Attention.VARIANT_OPTION), precision);
        this.capability = capability;
        this.half = halfWeights(precision, blas);
        this.description = "cuda (no device: test sink)" + weightsNote(precision, half) + "; attention: "
                + attentionPath.name().toLowerCase(Locale.ROOT)
                + (notes.isEmpty() ? "" : " (" + String.join("; ", notes) + ")")
                + (ragged ? "" : "; ragged batches off (padded)");
    }

    /** The path that runs: {@code cudnn} only when its library opened ({@code cudnn} non-null), else flash. */
    static Attention.Path effectivePath(Attention.Path asked, CudnnAttention cudnn) {
        return asked == Attention.Path.CUDNN && cudnn == null ? Attention.Path.FLASH : asked;
    }

    /** The 16-bit GEMM weights at precision BF16 / FP16 where {@code blas} multiplies 16-bit inputs, else null. */
    private static HalfWeights halfWeights(Precision precision, Blas blas) {
        if (!blas.halfInputs()) return null;
        return switch (precision) {
            case BF16 -> new HalfWeights(DType.BF16);
            case FP16 -> new HalfWeights(DType.F16);
            case FP32, TF32 -> null;
        };
    }

    /** What the description says of the weights at a 16-bit precision (nothing at fp32 / tf32). */
    private static String weightsNote(Precision precision, HalfWeights half) {
        if (precision != Precision.BF16 && precision != Precision.FP16) return "";
        return half != null
                ? "; GEMM weights in " + precision.name().toLowerCase(Locale.ROOT) + " on the device"
                : "; weights fp32 on the device (this GEMM path has no 16-bit inputs)";
    }

    /** Opens device {@code cuda.device} (default 0) with the given options. */
    static CudaBackend open(BackendOptions options) {
        Attention.Path.parse(options.extra().get(ATTENTION_OPTION)); // a bad option fails before any native work
        Attention.parseVariant(options.extra().get(Attention.VARIANT_OPTION), options.precision());
        Attention.Fp32Choice.parse(options.extra());
        raggedOn(options.extra());
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
        CudnnAttention cudnn = null;
        try {
            pool = new DevicePool(ctx);
            kernels = new KernelModule(ctx.stream());
            ReentrantLock lock = ctx.stream().lock();
            lock.lock();
            try {
                kernels.loadAll(info.ccMajor() * 10 + info.ccMinor());
            } finally {
                lock.unlock();
            }
            List<String> notes = new ArrayList<>();
            blas = GemmPaths.open(
                    options.extra(),
                    new DriverLauncher(kernels, ctx.stream()),
                    ctx.stream(),
                    options.precision(),
                    notes);
            if (Attention.Path.parse(options.extra().get(ATTENTION_OPTION)) == Attention.Path.CUDNN) {
                lock.lock();
                try {
                    ctx.makeCurrent();
                    cudnn = CudnnAttention.open(options.extra(), ctx.stream(), notes); // null: one line in notes
                } finally {
                    lock.unlock();
                }
            }
            return new CudaBackend(ctx, pool, kernels, blas, cudnn, options, notes);
        } catch (RuntimeException | Error e) {
            if (cudnn != null) cudnn.close();
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

    @Override
    public String name() {
        return "cuda";
    }

    @Override
    public String description() {
        return description;
    }

    /** The host copies' page-locked staging ({@code -Dattn.cuda.pinned}): off, on with its bytes, or why it failed. */
    String pinnedState() {
        return sink instanceof DriverSink d
                ? d.pinnedState() + (d.stageBytes() > 0 ? ", " + d.stageBytes() + " bytes" : "")
                : "off (no device)";
    }

    /** Device memory the pool holds (in use plus cached), for tests and diagnostics. */
    long deviceBytes() {
        return pool == null ? 0 : pool.allocatedBytes();
    }

    @Override
    public boolean supports(Node node) {
        if (!ragged
                && node.op() == io.attn.graph.Op.ATTENTION
                && node.params(OpParams.Attention.class).mask().segmented()) return false;
        return unsupported(node) == null;
    }

    /**
     * What this backend computes, known without a device ({@link CudaBackendProvider#support}): every op on F32
     * tensors (a ragged batch's attention when its padded copy indexes within 2^31; int8 products up to K = 33025).
     */
    static String unsupported(Node node) {
        if (node.dtype() != DType.F32) return node.dtype() + " tensors (the cuda backend computes F32 only)";
        if (node.op() == io.attn.graph.Op.QMATMUL) {
            String why = Quantized.unsupported(node);
            if (why != null) return why;
        }
        // ragged batches (sequences laid one after another): the attention runs padded between two copies
        if (node.op() == io.attn.graph.Op.ATTENTION
                && node.params(OpParams.Attention.class).mask().segmented()) {
            String why = io.attn.cuda.ops.Attention.raggedUnsupported(node);
            if (why != null) return why;
        }
        for (Node in : node.inputs())
            if (in.dtype() != DType.F32) return in.dtype() + " inputs (the cuda backend computes F32 only)";
        return null;
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
        if (buffer instanceof CudaBuffer b && b.ownedBy(pool)) {
            synchronized (constants) {
                constants.remove(b);
            }
            b.close();
        }
    }

    /**
     * A weight's device buffer: in 16 bits (rounded on the host, uploaded once; no fp32 copy) when every step that
     * reads it is a GEMM taking it as B ({@link HalfWeights}) at precision bf16 / fp16, else fp32.
     */
    @Override
    public Buffer constant(float[] data) {
        short[] h = half == null ? null : half.narrow(data);
        CudaBuffer b;
        if (h == null) b = (CudaBuffer) hostView(data);
        else {
            b = (CudaBuffer) allocate(half.type(), h.length);
            enter();
            try {
                sink.upload16(h, b);
                lastOp = "upload";
            } finally {
                lock.unlock();
            }
        }
        synchronized (constants) {
            constants.put(b, (long) data.length * b.dtype().byteSize());
        }
        return b;
    }

    /**
     * Bytes of the weights on the device: 4 per fp32 value, 2 per value held in 16 bits, 1 per int8 value (with the
     * int8 ops' scales and zero points).
     */
    @Override
    public long constantBytes() {
        long q = stream.arrays.bytes();
        synchronized (constants) {
            long n = q;
            for (long v : constants.values()) n += v;
            return n;
        }
    }

    /** Bytes of the weights held in 16 bits (part of {@link #constantBytes}). */
    long constantBytes16() {
        synchronized (constants) {
            long n = 0;
            for (var e : constants.entrySet()) if (e.getKey().dtype() != DType.F32) n += e.getValue();
            return n;
        }
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

    /**
     * CUDA events on the backend's stream: {@link DeviceTimer#start} records one, {@link DeviceTimer#stop} records the
     * second, waits for it and returns {@code cuEventElapsedTime}. Null for a backend made for tests (no device).
     */
    @Override
    public DeviceTimer deviceTimer() {
        if (ctx == null) return null;
        enter();
        try {
            return new EventTimer();
        } finally {
            lock.unlock();
        }
    }

    /** Two events on the stream; every call under the stream lock, with the context current. */
    private final class EventTimer implements DeviceTimer {
        private final jcuda.driver.CUevent start = new jcuda.driver.CUevent(), stop = new jcuda.driver.CUevent();
        private boolean started, done;

        EventTimer() { // called under the lock
            Cuda.check(jcuda.driver.JCudaDriver.cuEventCreate(start, 0), "cuEventCreate");
            int st = jcuda.driver.JCudaDriver.cuEventCreate(stop, 0);
            if (st != jcuda.driver.CUresult.CUDA_SUCCESS) jcuda.driver.JCudaDriver.cuEventDestroy(start);
            Cuda.check(st, "cuEventCreate");
        }

        @Override
        public void start() {
            enter();
            try {
                if (done) throw new IllegalStateException("device timer is closed");
                Cuda.check(jcuda.driver.JCudaDriver.cuEventRecord(start, ctx.stream()), "cuEventRecord(start)");
                started = true;
            } finally {
                lock.unlock();
            }
        }

        @Override
        public double stop() {
            enter();
            try {
                if (!started) throw new IllegalStateException("device timer stopped before it was started");
                started = false;
                Cuda.check(jcuda.driver.JCudaDriver.cuEventRecord(stop, ctx.stream()), "cuEventRecord(stop)");
                Cuda.check(
                        jcuda.driver.JCudaDriver.cuEventSynchronize(stop), "cuEventSynchronize (after " + lastOp + ")");
                float[] ms = {0};
                Cuda.check(jcuda.driver.JCudaDriver.cuEventElapsedTime(ms, start, stop), "cuEventElapsedTime");
                return ms[0];
            } finally {
                lock.unlock();
            }
        }

        @Override
        public void close() {
            lock.lock();
            try {
                if (done) return;
                done = true;
                if (closed) return; // the context is gone, and its events with it
                ctx.makeCurrent();
                jcuda.driver.JCudaDriver.cuEventDestroy(start);
                jcuda.driver.JCudaDriver.cuEventDestroy(stop);
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * The graph with this backend's fusions ({@link Fusions}: GEMM with bias and activation, the attention weights;
     * attention's scratch memory in the executor's buffer plan).
     */
    @Override
    public Program compile(Graph graph) {
        Program p = Fusions.compile(
                graph, this, this::kernel, attentionPath, fp32Flash, precision, capability, flashVariant);
        if (half != null) half.register(p);
        return p;
    }

    /** A program step's kernel: the buffers checked against the nodes' sizes, then {@code launch} under the lock. */
    private Program.Kernel kernel(Node output, List<Node> inputs, Fusions.Launch launch) {
        String what = output.toString();
        return (out, in, scratch) -> {
            CudaBuffer y = dev(out, output.shape().size(), what);
            CudaBuffer[] x = new CudaBuffer[in.length];
            for (int i = 0; i < in.length; i++)
                x[i] = dev(in[i], inputs.get(i).shape().size(), what);
            CudaBuffer sc = scratch == null ? null : dev(scratch, 0, what);
            enter();
            try {
                lastOp = output + " " + output.op();
                launch.run(stream, y, x, sc);
            } finally {
                lock.unlock();
            }
        };
    }

    /** The one exhaustive switch over the ops (no default: a new Op breaks this build until handled). */
    private void run(Node node, CudaBuffer y, CudaBuffer[] x) {
        CudaStream st = stream;
        // "case null" makes this an enhanced switch, which javac requires to be exhaustive: a new Op breaks this build
        switch (node.op()) {
            case null -> throw new IllegalStateException(node + " has no op");
            case INPUT, CONSTANT -> throw new IllegalStateException("leaf " + node + " is not executed");
            case MATMUL -> MatMul.run(st, node, y, x);
            case ADD_BIAS -> Elementwise.addBias(st, node, y, x[0], x[1]);
            case ADD -> Elementwise.add(st, x[0], x[1], y, node.shape().size());
            case SCALE -> Elementwise.scale(st, node, y, x[0]);
            case SOFTMAX -> Softmax.run(st, node, y, x);
            case LAYER_NORM -> LayerNorm.run(st, node, y, x);
            case RELU -> Elementwise.relu(st, node, y, x[0]);
            case GELU -> Elementwise.gelu(st, node, y, x[0]);
            case SILU -> Elementwise.silu(st, node, y, x[0]);
            case EMBEDDING -> Embedding.run(st, node, y, x[0], x[1]);
            case POSITIONAL_ENCODING -> PositionalEncoding.run(st, node, y, x[0]);
            case SPLIT_HEADS -> Heads.splitHeads(st, node, y, x[0]);
            case MERGE_HEADS -> Heads.mergeHeads(st, node, y, x[0]);
            case CONCAT -> Concat.run(st, node, y, x);
            case MEAN -> Mean.run(st, node, y, x[0]);
            case ATTENTION ->
                Attention.run(st, attentionPath, fp32Flash, precision, capability, flashVariant, node, y, x, null);
            case CACHE_WRITE -> CacheWrite.run(st, node, y, x);
            case RMS_NORM -> RmsNorm.run(st, node, y, x);
            case ROPE -> Rope.run(st, node, y, x);
            case GLU -> Glu.run(st, node, y, x[0]);
            case QMATMUL -> Quantized.matmul(st, node, y, x);
            case QEMBEDDING -> Quantized.embedding(st, node, y, x[0]);
        }
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
            AutoCloseable staging = sink instanceof DriverSink d ? d : null; // its page-locked buffer
            for (AutoCloseable c :
                    new AutoCloseable[] {drain, staging, stream.arrays, cudnn, blas, kernels, pool, ctx}) {
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
