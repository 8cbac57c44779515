package io.attn.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.backend.Backend;
import io.attn.exec.Executor;
import io.attn.graph.GraphBuilder;
import io.attn.graph.MaskKind;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * The CUDA backend's ops against plain double-precision loops ({@link Ref}). Run twice: on a real GPU ({@link
 * CudaOpsGpuTest}, skipped without one) and with the kernels compiled for the host ({@link CudaOpsEmulatedTest},
 * skipped without g++). Shapes are small but not multiples of the tile or block sizes, and cover every mask kind, a
 * fully masked row, and every GEMM path that loads.
 *
 * <p>Error bounds: inputs are in [-1, 1]. A float32 dot product of K terms has a rounding error of about K * 2^-24 *
 * sum|a_i b_i| in the worst case, under 1e-5 for K <= 100 here, so GEMMs and attention use 1e-4 absolute (any
 * indexing error is O(0.1)). Softmax weights are in [0, 1] with expf accurate to ~2 ulp: 2e-6. Element-wise ops: 1e-5
 * absolute plus 1e-5 relative.
 */
abstract class CudaOpsChecks extends FlashChecks {
    final Random rnd = new Random(42);

    /** The {@code gemm} option values to test. */
    abstract List<String> gemmPaths();

    /** Device bytes the backend holds, or -1 when not tracked. */
    abstract long deviceBytes(Backend b);

    float[] rand(int n) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) a[i] = rnd.nextFloat() * 2 - 1;
        return a;
    }

    static List<Tensor> run(Backend be, GraphBuilder g, Map<String, Tensor> in, Node... outs) {
        try (Executor ex = new Executor(be, g.build(outs))) {
            return ex.run(in);
        }
    }

    static void close(String what, double[] want, float[] got, double abs, double rel) {
        assertEquals(want.length, got.length, what + " length");
        for (int i = 0; i < want.length; i++) {
            double tol = abs + rel * Math.abs(want[i]);
            if (!(Math.abs(want[i] - got[i]) <= tol))
                throw new AssertionError(
                        what + " [" + i + "]: want " + want[i] + ", got " + got[i] + " (tol " + tol + ")");
        }
    }

    @Test
    void runIntoDownloadsIntoTheCallersArrays() {
        // a backend whose buffers are not host arrays: Executor.runInto downloads each output into the given array
        int batch = 2, m = 9, n = 12, k = 16;
        float[] a = rand(batch * m * k), b = rand(batch * n * k);
        GraphBuilder g = new GraphBuilder();
        Node na = g.input("a", batch, m, k), nb = g.input("b", batch, n, k);
        Node y = g.matmul(na, nb, false, true, 1f);
        try (Backend be = open("gemm", gemmPaths().getFirst());
                Executor ex = new Executor(be, g.build(y, na))) {
            float[] c = new float[batch * m * n], leaf = new float[batch * m * k];
            java.util.Arrays.fill(c, Float.NaN);
            List<Tensor> got =
                    ex.runInto(Map.of("a", Tensor.of(na.shape(), a), "b", Tensor.of(nb.shape(), b)), c, leaf);
            org.junit.jupiter.api.Assertions.assertSame(c, got.get(0).data());
            close("runInto product", Ref.matmul(a, b, batch, m, n, k, false, true, 1f, false), c, 1e-4, 0);
            org.junit.jupiter.api.Assertions.assertArrayEquals(a, leaf, "runInto leaf output");
        }
    }

    @Test
    void matmulEveryLayoutOnEveryGemmPath() {
        List<String> paths = gemmPaths();
        int batch = 3, m = 37, n = 70, k = 65;
        for (String path : paths)
            try (Backend be = open("gemm", path)) {
                for (boolean ta : new boolean[] {false, true})
                    for (boolean tb : new boolean[] {false, true})
                        for (boolean shared : new boolean[] {false, true}) {
                            float[] a = rand(batch * m * k), b = rand((shared ? 1 : batch) * k * n);
                            GraphBuilder g = new GraphBuilder();
                            Node na = g.input(
                                    "a",
                                    ta
                                            ? Tensor.of(a, batch, k, m).shape()
                                            : Tensor.of(a, batch, m, k).shape());
                            Node nb = shared
                                    ? g.input("b", tb ? new int[] {n, k} : new int[] {k, n})
                                    : g.input("b", tb ? new int[] {batch, n, k} : new int[] {batch, k, n});
                            Node y = g.matmul(na, nb, ta, tb, 0.75f);
                            Tensor out = run(
                                            be,
                                            g,
                                            Map.of("a", Tensor.of(na.shape(), a), "b", Tensor.of(nb.shape(), b)),
                                            y)
                                    .getFirst();
                            close(
                                    path + " matmul ta=" + ta + " tb=" + tb + " shared=" + shared,
                                    Ref.matmul(a, b, batch, m, n, k, ta, tb, 0.75f, shared),
                                    out.data(),
                                    1e-4,
                                    0);
                        }
            }
    }

    /** Masks for (B=2, H=3, L=5, S): bool (2, 1, 5, S) with row (b=1, i=2) fully masked, additive key padding. */
    float[][] masks(int s) {
        float[] bool = new float[2 * 5 * s], add = new float[2 * s];
        for (int i = 0; i < bool.length; i++) bool[i] = rnd.nextInt(4) == 0 ? 1 : 0;
        for (int j = 0; j < s; j++) bool[(1 * 5 + 2) * s + j] = 1;
        for (int i = 0; i < add.length; i++) add[i] = -rnd.nextFloat();
        add[3] = Float.NEGATIVE_INFINITY;
        return new float[][] {bool, add};
    }

    @Test
    void maskedSoftmax() {
        for (int s : new int[] {7, 300})
            try (Backend be = open()) {
                float[] x = rand(2 * 3 * 5 * s);
                float[][] mk = masks(s);
                GraphBuilder g = new GraphBuilder();
                Node nx = g.input("x", 2, 3, 5, s), nm = g.input("m", 2, 1, 5, s), nk = g.input("k", 2, s);
                Node y = g.softmax(nx, 0.5f, new MaskSpec(true, MaskKind.BOOL, MaskKind.ADDITIVE), nm, nk);
                Node plain = g.softmax(nx);
                List<Tensor> out = run(
                        be,
                        g,
                        Map.of(
                                "x",
                                Tensor.of(nx.shape(), x),
                                "m",
                                Tensor.of(nm.shape(), mk[0]),
                                "k",
                                Tensor.of(nk.shape(), mk[1])),
                        y,
                        plain);
                close(
                        "masked softmax S=" + s,
                        Ref.softmax(x, 2, 3, 5, s, 0.5, true, mk[0], 2, 1, 1, mk[1], 2),
                        out.get(0).data(),
                        2e-6,
                        0);
                close(
                        "plain softmax S=" + s,
                        Ref.softmax(x, 1, 1, 30, s, 1, false, null, 1, 1, 0, null, 0),
                        out.get(1).data(),
                        2e-6,
                        0);
            }
    }

    @Test
    void otherMaskLayouts() {
        // (L, S) additive mask with a -inf, bool key padding; and (1, H, L, S) bool mask alone, no causal
        int s = 6;
        try (Backend be = open()) {
            float[] x = rand(2 * 3 * 5 * s), ls = rand(5 * s), kp = new float[2 * s], hm = new float[3 * 5 * s];
            ls[4] = Float.NEGATIVE_INFINITY;
            for (int i = 0; i < kp.length; i++) kp[i] = rnd.nextInt(3) == 0 ? 1 : 0;
            for (int i = 0; i < hm.length; i++) hm[i] = rnd.nextInt(3) == 0 ? 1 : 0;
            GraphBuilder g = new GraphBuilder();
            Node nx = g.input("x", 2, 3, 5, s), nl = g.input("l", 5, s), nk = g.input("k", 2, s);
            Node nh = g.input("h", 1, 3, 5, s);
            Node a = g.softmax(nx, 1.5f, new MaskSpec(false, MaskKind.ADDITIVE, MaskKind.BOOL), nl, nk);
            Node b = g.softmax(nx, 1f, new MaskSpec(false, MaskKind.BOOL, MaskKind.NONE), nh, null);
            List<Tensor> out = run(
                    be,
                    g,
                    Map.of(
                            "x",
                            Tensor.of(nx.shape(), x),
                            "l",
                            Tensor.of(nl.shape(), ls),
                            "k",
                            Tensor.of(nk.shape(), kp),
                            "h",
                            Tensor.of(nh.shape(), hm)),
                    a,
                    b);
            close(
                    "softmax (L,S) additive + bool padding",
                    Ref.softmax(x, 2, 3, 5, s, 1.5, false, ls, 1, 1, 2, kp, 1),
                    out.get(0).data(),
                    2e-6,
                    0);
            close(
                    "softmax (1,H,L,S) bool",
                    Ref.softmax(x, 2, 3, 5, s, 1, false, hm, 1, 3, 1, null, 0),
                    out.get(1).data(),
                    2e-6,
                    0);
        }
    }

    @Test
    void layerNormWithoutParamsAndOtherAxes() {
        try (Backend be = open()) {
            int b = 3, l = 4, e = 5;
            float[] x = rand(b * l * e);
            GraphBuilder g = new GraphBuilder();
            Node nx = g.input("x", b, l, e);
            Node ln = g.layerNorm(nx, null, null, 1e-3f), m0 = g.mean(nx, 0), m2 = g.mean(nx, -1);
            Node cat = g.concat(-1, nx, g.scale(nx, 2f));
            List<Tensor> out = run(be, g, Map.of("x", Tensor.of(nx.shape(), x)), ln, m0, m2, cat);
            float[] ones = new float[e], zeros = new float[e];
            java.util.Arrays.fill(ones, 1f);
            close(
                    "layer_norm no params",
                    Ref.layerNorm(x, b * l, e, ones, zeros, 1e-3),
                    out.get(0).data(),
                    1e-5,
                    1e-5);
            double[] mean0 = new double[l * e], mean2 = new double[b * l], c = new double[2 * x.length];
            for (int i = 0; i < x.length; i++) {
                mean0[i % (l * e)] += x[i] / (double) b;
                mean2[i / e] += x[i] / (double) e;
                c[(i / e) * 2 * e + i % e] = x[i];
                c[(i / e) * 2 * e + e + i % e] = 2.0 * x[i];
            }
            close("mean axis 0", mean0, out.get(1).data(), 1e-6, 1e-5);
            close("mean last axis", mean2, out.get(2).data(), 1e-6, 1e-5);
            close("concat last axis", c, out.get(3).data(), 0, 0);
        }
    }

    @Test
    void attentionFusedAndUnfused() {
        int s = 9, d = 40, dv = 24;
        for (String mode : List.of("unfused", "fused", "flash")) // D = 40: flash falls back to unfused
        for (String path : gemmPaths())
                try (Backend be = open("attention", mode, "gemm", path)) {
                    float[] q = rand(2 * 3 * 5 * d), k = rand(2 * 3 * s * d), v = rand(2 * 3 * s * dv);
                    float[][] mk = masks(s);
                    GraphBuilder g = new GraphBuilder();
                    Node nq = g.input("q", 2, 3, 5, d), nk = g.input("k", 2, 3, s, d), nv = g.input("v", 2, 3, s, dv);
                    Node nm = g.input("m", 2, 1, 5, s), np = g.input("p", 2, s);
                    Node o = g.attention(
                            nq, nk, nv, Float.NaN, new MaskSpec(true, MaskKind.BOOL, MaskKind.ADDITIVE), nm, np);
                    Tensor out = run(
                                    be,
                                    g,
                                    Map.of(
                                            "q",
                                            Tensor.of(nq.shape(), q),
                                            "k",
                                            Tensor.of(nk.shape(), k),
                                            "v",
                                            Tensor.of(nv.shape(), v),
                                            "m",
                                            Tensor.of(nm.shape(), mk[0]),
                                            "p",
                                            Tensor.of(np.shape(), mk[1])),
                                    o)
                            .getFirst();
                    // reference: scores in double, then the same masked softmax, then P V
                    double[] sc = Ref.matmul(q, k, 6, 5, s, d, false, true, 1f, false);
                    float[] scf = new float[sc.length];
                    for (int i = 0; i < sc.length; i++) scf[i] = (float) sc[i];
                    double[] p = Ref.softmax(scf, 2, 3, 5, s, 1 / Math.sqrt(d), true, mk[0], 2, 1, 1, mk[1], 2);
                    close(
                            "attention " + mode + " gemm=" + path,
                            Ref.weightsTimesV(p, v, 6, 5, s, dv),
                            out.data(),
                            1e-4,
                            0);
                }
    }

    @Test
    void elementwiseOps() {
        try (Backend be = open()) {
            int b = 2, l = 3, e = 300, h = 4;
            float[] x = rand(b * l * e), x2 = rand(b * l * e), w = rand(e), bias = rand(e);
            float[] ids = {0, 4, 9, 3, 3, 1};
            float[] table = rand(10 * e);
            GraphBuilder g = new GraphBuilder();
            Node nx = g.input("x", b, l, e), nx2 = g.input("x2", b, l, e), ni = g.input("ids", b, l);
            Node nw = g.constant("w", Tensor.of(w, e)), nb = g.constant("b", Tensor.of(bias, e));
            Node nt = g.constant("t", Tensor.of(table, 10, e));
            Node[] outs = {
                g.layerNorm(nx, nw, nb, 1e-5f),
                g.gelu(nx, false),
                g.gelu(nx, true),
                g.relu(nx),
                g.add(nx, nx2),
                g.scale(nx, -1.5f),
                g.addBias(nx, nb),
                g.embedding(ni, nt),
                g.positionalEncoding(nx, 100),
                g.splitHeads(nx, h),
                g.mergeHeads(g.splitHeads(nx, h)),
                g.concat(1, nx, nx2),
                g.mean(nx, 1)
            };
            List<Tensor> got = run(
                    be,
                    g,
                    Map.of(
                            "x",
                            Tensor.of(nx.shape(), x),
                            "x2",
                            Tensor.of(nx2.shape(), x2),
                            "ids",
                            Tensor.of(ni.shape(), ids)),
                    outs);
            int n = x.length, dh = e / h;
            double[] gErf = new double[n],
                    gTanh = new double[n],
                    relu = new double[n],
                    add = new double[n],
                    scale = new double[n],
                    addB = new double[n],
                    pe = new double[n],
                    split = new double[n],
                    merge = new double[n],
                    emb = new double[n],
                    cat = new double[2 * n],
                    mean = new double[b * e];
            for (int i = 0; i < n; i++) {
                double v = x[i];
                gErf[i] = 0.5 * v * (1 + Ref.erf(v / Math.sqrt(2)));
                gTanh[i] = 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v * v * v)));
                relu[i] = Math.max(v, 0);
                add[i] = v + x2[i];
                scale[i] = -1.5 * v;
                addB[i] = v + bias[i % e];
                int col = i % e, pos = 100 + (i / e) % l;
                double ang = pos * Math.pow(10000, -(double) (col & ~1) / e);
                pe[i] = v + ((col & 1) == 0 ? Math.sin(ang) : Math.cos(ang));
                emb[i] = table[(int) ids[i / e] * e + col];
            }
            for (int bi = 0; bi < b; bi++)
                for (int li = 0; li < l; li++)
                    for (int hi = 0; hi < h; hi++)
                        for (int d = 0; d < dh; d++) {
                            split[((bi * h + hi) * l + li) * dh + d] = x[(bi * l + li) * e + hi * dh + d];
                            merge[(bi * l + li) * e + hi * dh + d] = x[(bi * l + li) * e + hi * dh + d];
                        }
            for (int bi = 0; bi < b; bi++)
                for (int r = 0; r < 2 * l; r++)
                    for (int c = 0; c < e; c++)
                        cat[(bi * 2 * l + r) * e + c] = r < l ? x[(bi * l + r) * e + c] : x2[(bi * l + r - l) * e + c];
            for (int bi = 0; bi < b; bi++)
                for (int c = 0; c < e; c++) {
                    double s = 0;
                    for (int li = 0; li < l; li++) s += x[(bi * l + li) * e + c];
                    mean[bi * e + c] = s / l;
                }
            double[][] want = {
                Ref.layerNorm(x, b * l, e, w, bias, 1e-5),
                gErf,
                gTanh,
                relu,
                add,
                scale,
                addB,
                emb,
                pe,
                split,
                merge,
                cat,
                mean
            };
            String[] names = {
                "layer_norm",
                "gelu",
                "gelu_tanh",
                "relu",
                "add",
                "scale",
                "add_bias",
                "embedding",
                "positional_encoding",
                "split_heads",
                "merge_heads",
                "concat",
                "mean"
            };
            for (int i = 0; i < outs.length; i++)
                close(names[i], want[i], got.get(i).data(), 1e-5, 1e-5);
        }
    }

    /** cache (B,H,C,D) with rows pos.. of every (b, h) replaced by x (B,H,L,D), in double. */
    static double[] cacheWritten(float[] cache, float[] x, int bh, int c, int l, int d, int pos) {
        double[] want = new double[cache.length];
        for (int i = 0; i < want.length; i++) want[i] = cache[i];
        for (int i = 0; i < bh; i++)
            for (int r = 0; r < l; r++)
                for (int j = 0; j < d; j++) want[(i * c + pos + r) * d + j] = x[(i * l + r) * d + j];
        return want;
    }

    @Test
    void cacheWriteInPlaceOnABoundBufferAndIntoADistinctOutput() {
        int b = 2, h = 3, c = 7, d = 5, l = 2;
        try (Backend be = open()) {
            GraphBuilder g = new GraphBuilder();
            Node cache = g.input("cache", b, h, c, d);
            Node x = g.input("x", b, h, l, d);
            Node pos = g.input("pos", 1);
            Node w = g.cacheWrite(cache, x, pos);
            float[] c0 = rand(b * h * c * d), x1 = rand(b * h * l * d), x2 = rand(b * h * l * d);
            var buf = be.allocate(io.attn.tensor.DType.F32, c0.length);
            be.upload(c0, c0.length, buf);
            try (Executor ex = new Executor(be, g.build(w))) {
                // in place: the bound buffer keeps the writes across calls
                ex.run(
                        Map.of("x", Tensor.of(x1, b, h, l, d), "pos", Tensor.of(new float[] {0}, 1)),
                        Map.of("cache", buf));
                List<Tensor> got = ex.run(
                        Map.of("x", Tensor.of(x2, b, h, l, d), "pos", Tensor.of(new float[] {4}, 1)),
                        Map.of("cache", buf));
                double[] want = cacheWritten(c0, x1, b * h, c, l, d, 0);
                float[] mid = new float[want.length];
                for (int i = 0; i < mid.length; i++) mid[i] = (float) want[i];
                want = cacheWritten(mid, x2, b * h, c, l, d, 4);
                close("cache_write in place", want, got.get(0).data(), 0, 0);
                float[] back = new float[c0.length];
                be.download(buf, back, back.length);
                close("bound cache buffer", want, back, 0, 0);
                // a host tensor as the cache is copied, never written
                float[] host = c0.clone();
                got = ex.run(Map.of(
                        "cache", Tensor.of(host, b, h, c, d),
                        "x", Tensor.of(x1, b, h, l, d),
                        "pos", Tensor.of(new float[] {5}, 1)));
                close(
                        "cache_write from a host tensor",
                        cacheWritten(c0, x1, b * h, c, l, d, 5),
                        got.get(0).data(),
                        0,
                        0);
                close("caller's tensor untouched", cacheWritten(c0, x1, b * h, c, 0, d, 0), host, 0, 0);
            }
            // a distinct output buffer: every element written, the cache input left as it was
            var in = be.allocate(io.attn.tensor.DType.F32, c0.length);
            var xb = be.allocate(io.attn.tensor.DType.F32, x1.length);
            var pb = be.allocate(io.attn.tensor.DType.F32, 1);
            var out = be.allocate(io.attn.tensor.DType.F32, c0.length);
            be.upload(c0, c0.length, in);
            be.upload(x1, x1.length, xb);
            be.upload(new float[] {3}, 1, pb);
            be.upload(rand(c0.length), c0.length, out);
            be.execute(w, out, new io.attn.backend.Buffer[] {in, xb, pb});
            float[] got = new float[c0.length], kept = new float[c0.length];
            be.download(out, got, got.length);
            be.download(in, kept, kept.length);
            close("cache_write into a distinct output", cacheWritten(c0, x1, b * h, c, l, d, 3), got, 0, 0);
            close("cache input unchanged", cacheWritten(c0, x1, b * h, c, 0, d, 0), kept, 0, 0);
            for (var bb : List.of(buf, in, xb, pb, out)) be.release(bb);
        }
    }

    @Test
    void decoderOnlyCachedStepsEqualRecomputation() {
        // a tiny random LM: the logits of every cached step equal a from-scratch prefill of the same tokens
        int v = 11, e = 8, f = 16, maxLen = 8;
        java.util.Map<String, Tensor> sd = new java.util.HashMap<>();
        sd.put("embed.weight", Tensor.of(rand(v * e), v, e));
        String p = "layers.0.";
        sd.put(p + "self_attn.in_proj_weight", Tensor.of(rand(3 * e * e), 3 * e, e));
        sd.put(p + "self_attn.in_proj_bias", Tensor.of(rand(3 * e), 3 * e));
        sd.put(p + "self_attn.out_proj.weight", Tensor.of(rand(e * e), e, e));
        sd.put(p + "self_attn.out_proj.bias", Tensor.of(rand(e), e));
        sd.put(p + "linear1.weight", Tensor.of(rand(f * e), f, e));
        sd.put(p + "linear1.bias", Tensor.of(rand(f), f));
        sd.put(p + "linear2.weight", Tensor.of(rand(e * f), e, f));
        sd.put(p + "linear2.bias", Tensor.of(rand(e), e));
        for (String n : new String[] {"norm1.", "norm2."}) {
            sd.put(p + n + "weight", Tensor.of(rand(e), e));
            sd.put(p + n + "bias", Tensor.of(rand(e), e));
        }
        sd.put("lm_head.weight", Tensor.of(rand(v * e), v, e));
        var cfg = new io.attn.nn.DecoderOnlyConfig(
                v, new io.attn.nn.LayerConfig(e, 2, f, "relu", 1e-5f, true, true), 1, maxLen, false, false, false);
        var lm = io.attn.nn.DecoderOnlyLM.load(cfg, new io.attn.nn.StateDict(sd));
        int[][] prompts = {{1, 2, 3}, {4}};
        int[][] seqs = {prompts[0].clone(), prompts[1].clone()};
        try (Backend be = open();
                var cached = new io.attn.nn.DecoderSession(lm, be, 2, maxLen);
                var fresh = new io.attn.nn.DecoderSession(lm, be, 2, maxLen)) {
            float[][] logits = cached.prefill(prompts);
            for (int step = 0; step < 4; step++) {
                float[][] want = fresh.prefill(seqs);
                for (int s = 0; s < 2; s++) {
                    double[] w = new double[v];
                    for (int i = 0; i < v; i++) w[i] = want[s][i];
                    // same kernels on both paths, different summation lengths: 1e-4 absolute as for attention
                    close("step " + step + " sequence " + s, w, logits[s], 1e-4, 1e-5);
                    // and the plain double forward of the unpadded sequence (what the CPU backend is tested against)
                    close(
                            "step " + step + " sequence " + s + " vs double",
                            tinyLm(sd, seqs[s], e, 2, f, v),
                            logits[s],
                            1e-4,
                            1e-5);
                }
                int[] next = {(step * 3 + 1) % v, (step * 5 + 2) % v};
                for (int s = 0; s < 2; s++) {
                    seqs[s] = java.util.Arrays.copyOf(seqs[s], seqs[s].length + 1);
                    seqs[s][seqs[s].length - 1] = next[s];
                }
                logits = cached.step(next);
            }
        }
    }

    @Test
    void bertModelOnAPaddedBatchEqualsTheDoubleForwardOfEachSequence() {
        // Hugging Face's BertModel (the encoder of sentence-embedding models): token ids in, a right-padded batch with
        // the padding masked out of the keys, post-norm layers with exact GELU
        int v = 13, e = 8, h = 2, f = 12, maxPos = 8;
        java.util.Map<String, Tensor> sd = new java.util.LinkedHashMap<>();
        sd.put("embeddings.word_embeddings.weight", Tensor.of(rand(v * e), v, e));
        sd.put("embeddings.position_embeddings.weight", Tensor.of(rand(maxPos * e), maxPos, e));
        sd.put("embeddings.token_type_embeddings.weight", Tensor.of(rand(2 * e), 2, e));
        sd.put("embeddings.LayerNorm.weight", Tensor.of(rand(e), e));
        sd.put("embeddings.LayerNorm.bias", Tensor.of(rand(e), e));
        String p = "encoder.layer.0.";
        for (String n : new String[] {
            "attention.self.query.", "attention.self.key.", "attention.self.value.", "attention.output.dense."
        }) {
            sd.put(p + n + "weight", Tensor.of(rand(e * e), e, e));
            sd.put(p + n + "bias", Tensor.of(rand(e), e));
        }
        sd.put(p + "intermediate.dense.weight", Tensor.of(rand(f * e), f, e));
        sd.put(p + "intermediate.dense.bias", Tensor.of(rand(f), f));
        sd.put(p + "output.dense.weight", Tensor.of(rand(e * f), e, f));
        sd.put(p + "output.dense.bias", Tensor.of(rand(e), e));
        for (String n : new String[] {"attention.output.LayerNorm.", "output.LayerNorm."}) {
            sd.put(p + n + "weight", Tensor.of(rand(e), e));
            sd.put(p + n + "bias", Tensor.of(rand(e), e));
        }
        var cfg = io.attn.nn.ModelConfig.bert(new io.attn.nn.BertConfig(v, e, 1, h, f, "gelu", 1e-12f, maxPos, 2));
        int[][] seqs = {{1, 5, 7, 2}, {1, 9, 2}, {1, 12, 11, 10, 3, 2}};
        int len = 6;
        float[] ids = new float[seqs.length * len], pad = new float[seqs.length * len];
        for (int b = 0; b < seqs.length; b++)
            for (int t = 0; t < len; t++) {
                if (t < seqs[b].length) ids[b * len + t] = seqs[b][t];
                else pad[b * len + t] = 1;
            }
        try (Backend be = open();
                var m = io.attn.nn.Model.load(cfg, new io.attn.nn.StateDict(sd))) {
            float[] y = m.run(
                            be,
                            io.attn.engine.Request.of(Tensor.of(ids, seqs.length, len))
                                    .withKeyPaddingMask(Tensor.of(pad, seqs.length, len)))
                    .output()
                    .data();
            for (int b = 0; b < seqs.length; b++) {
                double[][] want = tinyBert(sd, seqs[b], e, h, f);
                for (int t = 0; t < seqs[b].length; t++)
                    close(
                            "sequence " + b + " token " + t,
                            want[t],
                            java.util.Arrays.copyOfRange(y, (b * len + t) * e, (b * len + t + 1) * e),
                            1e-4,
                            1e-5);
            }
        }
    }

    /** BertModel's last hidden state of one unpadded sequence, in double (one layer, exact GELU, eps 1e-12). */
    static double[][] tinyBert(java.util.Map<String, Tensor> sd, int[] ids, int e, int h, int f) {
        int n = ids.length, d = e / h;
        java.util.function.Function<String, float[]> w = k -> sd.get(k).data();
        double[][] x = new double[n][e];
        for (int t = 0; t < n; t++)
            for (int c = 0; c < e; c++)
                x[t][c] = (double) w.apply("embeddings.word_embeddings.weight")[ids[t] * e + c]
                        + w.apply("embeddings.token_type_embeddings.weight")[c]
                        + w.apply("embeddings.position_embeddings.weight")[t * e + c];
        x = norm(x, w.apply("embeddings.LayerNorm.weight"), w.apply("embeddings.LayerNorm.bias"), 1e-12);
        String p = "encoder.layer.0.";
        double[][][] qkv = new double[3][][];
        String[] names = {"query", "key", "value"};
        for (int i = 0; i < 3; i++)
            qkv[i] = linear(
                    x,
                    w.apply(p + "attention.self." + names[i] + ".weight"),
                    w.apply(p + "attention.self." + names[i] + ".bias"),
                    e);
        double[][] att = new double[n][e];
        for (int hh = 0; hh < h; hh++)
            for (int t = 0; t < n; t++) {
                double[] sc = new double[n];
                double max = Double.NEGATIVE_INFINITY, sum = 0;
                for (int s2 = 0; s2 < n; s2++) {
                    for (int c = 0; c < d; c++) sc[s2] += qkv[0][t][hh * d + c] * qkv[1][s2][hh * d + c];
                    sc[s2] /= Math.sqrt(d);
                    max = Math.max(max, sc[s2]);
                }
                for (int s2 = 0; s2 < n; s2++) sum += sc[s2] = Math.exp(sc[s2] - max);
                for (int s2 = 0; s2 < n; s2++)
                    for (int c = 0; c < d; c++) att[t][hh * d + c] += sc[s2] / sum * qkv[2][s2][hh * d + c];
            }
        double[][] o = linear(
                att, w.apply(p + "attention.output.dense.weight"), w.apply(p + "attention.output.dense.bias"), e);
        for (int t = 0; t < n; t++) for (int c = 0; c < e; c++) o[t][c] += x[t][c];
        x = norm(
                o,
                w.apply(p + "attention.output.LayerNorm.weight"),
                w.apply(p + "attention.output.LayerNorm.bias"),
                1e-12);
        double[][] h1 = linear(x, w.apply(p + "intermediate.dense.weight"), w.apply(p + "intermediate.dense.bias"), f);
        for (double[] r : h1) for (int c = 0; c < f; c++) r[c] = 0.5 * r[c] * (1 + erf(r[c] / Math.sqrt(2)));
        double[][] ff = linear(h1, w.apply(p + "output.dense.weight"), w.apply(p + "output.dense.bias"), e);
        for (int t = 0; t < n; t++) for (int c = 0; c < e; c++) ff[t][c] += x[t][c];
        return norm(ff, w.apply(p + "output.LayerNorm.weight"), w.apply(p + "output.LayerNorm.bias"), 1e-12);
    }

    /** erf by its Maclaurin series (|x| < 3 here; terms until they vanish): exact to double rounding. */
    private static double erf(double x) {
        double term = x, sum = x;
        for (int k = 1; k < 200 && Math.abs(term) > 1e-18 * Math.abs(sum); k++) {
            term *= -x * x / k;
            sum += term / (2 * k + 1);
        }
        return 2 / Math.sqrt(Math.PI) * sum;
    }

    /**
     * The logits after the last token of {@code ids}, in double: one pre-norm relu encoder layer with causal attention
     * over sinusoidal-position embeddings, no final norm, untied lm_head without bias.
     */
    static double[] tinyLm(java.util.Map<String, Tensor> sd, int[] ids, int e, int h, int f, int v) {
        int n = ids.length, d = e / h;
        java.util.function.Function<String, float[]> w = k -> sd.get(k).data();
        double[][] x = new double[n][e];
        for (int t = 0; t < n; t++)
            for (int c = 0; c < e; c++) {
                double ang = t * Math.exp(-Math.log(10000.0) * (c - c % 2) / e);
                x[t][c] = w.apply("embed.weight")[ids[t] * e + c] + (c % 2 == 0 ? Math.sin(ang) : Math.cos(ang));
            }
        String p = "layers.0.";
        double[][] hn = norm(x, w.apply(p + "norm1.weight"), w.apply(p + "norm1.bias"));
        double[][] qkv =
                linear(hn, w.apply(p + "self_attn.in_proj_weight"), w.apply(p + "self_attn.in_proj_bias"), 3 * e);
        double[][] att = new double[n][e];
        for (int hh = 0; hh < h; hh++)
            for (int t = 0; t < n; t++) {
                double[] sc = new double[t + 1];
                double max = Double.NEGATIVE_INFINITY, sum = 0;
                for (int s2 = 0; s2 <= t; s2++) {
                    for (int c = 0; c < d; c++) sc[s2] += qkv[t][hh * d + c] * qkv[s2][e + hh * d + c];
                    sc[s2] /= Math.sqrt(d);
                    max = Math.max(max, sc[s2]);
                }
                for (int s2 = 0; s2 <= t; s2++) sum += sc[s2] = Math.exp(sc[s2] - max);
                for (int s2 = 0; s2 <= t; s2++)
                    for (int c = 0; c < d; c++) att[t][hh * d + c] += sc[s2] / sum * qkv[s2][2 * e + hh * d + c];
            }
        double[][] o = linear(att, w.apply(p + "self_attn.out_proj.weight"), w.apply(p + "self_attn.out_proj.bias"), e);
        for (int t = 0; t < n; t++) for (int c = 0; c < e; c++) x[t][c] += o[t][c];
        double[][] h1 = linear(
                norm(x, w.apply(p + "norm2.weight"), w.apply(p + "norm2.bias")),
                w.apply(p + "linear1.weight"),
                w.apply(p + "linear1.bias"),
                f);
        for (double[] r : h1) for (int c = 0; c < f; c++) r[c] = Math.max(0, r[c]);
        double[][] ff = linear(h1, w.apply(p + "linear2.weight"), w.apply(p + "linear2.bias"), e);
        for (int t = 0; t < n; t++) for (int c = 0; c < e; c++) x[t][c] += ff[t][c];
        return linear(new double[][] {x[n - 1]}, w.apply("lm_head.weight"), null, v)[0];
    }

    private static double[][] linear(double[][] x, float[] wt, float[] b, int out) {
        int in = x[0].length;
        double[][] y = new double[x.length][out];
        for (int r = 0; r < x.length; r++)
            for (int o = 0; o < out; o++) {
                double acc = b == null ? 0 : b[o];
                for (int i = 0; i < in; i++) acc += x[r][i] * wt[o * in + i];
                y[r][o] = acc;
            }
        return y;
    }

    private static double[][] norm(double[][] x, float[] g, float[] b) {
        return norm(x, g, b, 1e-5);
    }

    private static double[][] norm(double[][] x, float[] g, float[] b, double eps) {
        double[][] y = new double[x.length][];
        for (int r = 0; r < x.length; r++) {
            int e = x[r].length;
            double mean = 0, var = 0;
            for (double a : x[r]) mean += a / e;
            for (double a : x[r]) var += (a - mean) * (a - mean) / e;
            y[r] = new double[e];
            for (int c = 0; c < e; c++) y[r][c] = (x[r][c] - mean) / Math.sqrt(var + eps) * g[c] + b[c];
        }
        return y;
    }

    @Test
    void badEmbeddingIdIsBadInputAndSteadyStateAllocatesNothing() throws Exception {
        try (Backend be = open()) {
            GraphBuilder g = new GraphBuilder();
            Node ni = g.input("ids", 4);
            Node y = g.gelu(g.embedding(ni, g.constant("t", Tensor.of(rand(5 * 8), 5, 8))), false);
            try (Executor ex = new Executor(be, g.build(y))) {
                AttnException e = assertThrows(
                        AttnException.class, () -> ex.run(Map.of("ids", Tensor.of(new float[] {0, 1, 5, 2}, 4))));
                assertEquals(AttnException.Code.BAD_INPUT, e.code());
                assertTrue(e.getMessage().contains("position 2"), e.getMessage());
                Tensor ok = Tensor.of(new float[] {0, 1, 4, 2}, 4);
                List<Tensor> first = ex.run(Map.of("ids", ok)); // the error word was cleared
                long bytes = deviceBytes(be);
                ExecutorService pool = Executors.newFixedThreadPool(4);
                List<Future<List<Tensor>>> fs = new ArrayList<>();
                for (int i = 0; i < 40; i++) fs.add(pool.submit(() -> ex.run(Map.of("ids", ok))));
                for (Future<List<Tensor>> f : fs)
                    close(
                            "concurrent run",
                            toDouble(first.getFirst().data()),
                            f.get().getFirst().data(),
                            0,
                            0);
                pool.shutdown();
                // four threads may hold four arenas at once, but a second round must not allocate again
                long afterFirstRound = deviceBytes(be);
                for (int i = 0; i < 20; i++) ex.run(Map.of("ids", ok));
                if (bytes >= 0) { // pooled memory: the second round reuses the first round's blocks
                    assertEquals(afterFirstRound, deviceBytes(be));
                    assertTrue(afterFirstRound >= bytes);
                }
            }
        }
    }

    static double[] toDouble(float[] f) {
        double[] d = new double[f.length];
        for (int i = 0; i < f.length; i++) d[i] = f[i];
        return d;
    }
}
