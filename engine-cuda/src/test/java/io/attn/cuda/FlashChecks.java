package io.attn.cuda;

import io.attn.backend.Backend;
import io.attn.exec.Executor;
import io.attn.graph.GraphBuilder;
import io.attn.graph.MaskKind;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.tensor.Tensor;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Flash attention ({@code flash_attention.cu}, option {@code attention=flash}, the default) against a plain double
 * loop written here from MaskSpec's javadoc: every mask kind and layout, D = 32 / 64 / 128, L != S on both sides, tile
 * edges (L, S not multiples of 32; several key tiles; causal tile skipping), a fully masked row. Run by {@link
 * CudaOpsEmulatedTest} (no GPU) and {@link CudaOpsGpuTest}, which also runs the 16-bit tensor-core kernels.
 *
 * <p>Bound for fp32: the scores are float32 dot products of D <= 128 terms in [-1, 1] (error <= D * 2^-24 * D ~ 1e-3
 * absolute in the worst case, typically sqrt(D) * 2^-24 * |q||k| ~ 1e-6), scaled by 1/sqrt(D); expf is within 2 ulp;
 * the output is a convex combination of V rows accumulated in float32 over S <= 80 keys. Observed relative Frobenius
 * errors are around 1e-7; the test asks for 1e-5 relative Frobenius and 2e-5 absolute per element (outputs are in
 * [-1, 1]); an indexing or masking error changes outputs by O(0.1) (checked by breaking the key-padding offset and the
 * rescaling once each).
 */
abstract class FlashChecks {
    final Random frnd = new Random(7);

    /** A backend with options {@code key, value, ...}; the pseudo-option {@code precision} picks the precision. */
    abstract Backend open(String... kv);

    float[] frand(int n) {
        float[] a = new float[n];
        for (int i = 0; i < n; i++) a[i] = frnd.nextFloat() * 2 - 1;
        return a;
    }

    /** One attention case: shapes, masks (mask dims mB x mH x L x S, rank 2 when mB == 0), what is masked. */
    record Case(String name, int b, int h, int l, int s, boolean causal, MaskKind mask, int mB, int mH, MaskKind kpm) {}

    static final Case[] CASES = {
        new Case("plain", 2, 2, 37, 45, false, MaskKind.NONE, 0, 0, MaskKind.NONE),
        new Case("causal L > S", 1, 2, 70, 45, true, MaskKind.NONE, 0, 0, MaskKind.NONE),
        new Case("causal S > L", 2, 1, 33, 80, true, MaskKind.NONE, 0, 0, MaskKind.NONE),
        new Case("bool mask (L,S) + bool padding", 2, 2, 20, 40, false, MaskKind.BOOL, 0, 0, MaskKind.BOOL),
        new Case(
                "additive (B,1,L,S) + additive padding, causal",
                2,
                3,
                35,
                35,
                true,
                MaskKind.ADDITIVE,
                2,
                1,
                MaskKind.ADDITIVE),
        new Case("bool (1,H,L,S)", 1, 3, 9, 66, false, MaskKind.BOOL, 1, 3, MaskKind.NONE),
        // several key tiles for both kernels (32 and 64 keys per tile): the running max / rescaling across tiles
        new Case("3 key tiles, additive padding", 1, 2, 70, 150, false, MaskKind.NONE, 0, 0, MaskKind.ADDITIVE),
    };

    /** Runs every case at every head dim through {@code be} and returns the worst relative Frobenius error. */
    double flashWorst(Backend be, int[] dims, double relFro, double absElem, String what) {
        double worst = 0;
        for (int d : dims)
            for (Case c : CASES) {
                float[] q = frand(c.b * c.h * c.l * d), k = frand(c.b * c.h * c.s * d), v = frand(c.b * c.h * c.s * d);
                GraphBuilder g = new GraphBuilder();
                Node nq = g.input("q", c.b, c.h, c.l, d), nk = g.input("k", c.b, c.h, c.s, d);
                Node nv = g.input("v", c.b, c.h, c.s, d);
                Map<String, Tensor> in = new HashMap<>();
                in.put("q", Tensor.of(nq.shape(), q));
                in.put("k", Tensor.of(nk.shape(), k));
                in.put("v", Tensor.of(nv.shape(), v));
                float[] mask = null, kpm = null;
                Node nm = null, np = null;
                if (c.mask != MaskKind.NONE) {
                    int[] dimsM = c.mB == 0 ? new int[] {c.l, c.s} : new int[] {c.mB, c.mH, c.l, c.s};
                    nm = g.input("m", dimsM);
                    mask = maskValues(nm.shape().size(), c.mask);
                    for (int j = 0; j < c.s; j++)
                        mask[2 * c.s + j] = c.mask == MaskKind.BOOL ? 1 : Float.NEGATIVE_INFINITY;
                    in.put("m", Tensor.of(nm.shape(), mask)); // row 2 (of the first mask slice) fully masked
                }
                if (c.kpm != MaskKind.NONE) {
                    np = g.input("p", c.b, c.s);
                    kpm = maskValues(c.b * c.s, c.kpm);
                    in.put("p", Tensor.of(np.shape(), kpm));
                }
                Node o = g.attention(nq, nk, nv, Float.NaN, new MaskSpec(c.causal, c.mask, c.kpm), nm, np);
                float[] got;
                try (Executor ex = new Executor(be, g.build(o))) {
                    got = ex.run(in).getFirst().data();
                }
                double[] want = reference(c, d, q, k, v, mask, kpm);
                double num = 0, den = 0;
                for (int i = 0; i < want.length; i++) {
                    double e = got[i] - want[i];
                    num += e * e;
                    den += want[i] * want[i];
                    if (!(Math.abs(e) <= absElem))
                        throw new AssertionError(
                                what + " D=" + d + " " + c.name + " [" + i + "]: want " + want[i] + ", got " + got[i]);
                }
                double rel = Math.sqrt(num / den);
                if (!(rel <= relFro))
                    throw new AssertionError(what + " D=" + d + " " + c.name + ": relative Frobenius error " + rel);
                worst = Math.max(worst, rel);
            }
        return worst;
    }

    /** Random mask values: BOOL 0/1 with about a quarter masked, ADDITIVE in [-2, 0] with some -inf. */
    float[] maskValues(int n, MaskKind kind) {
        float[] m = new float[n];
        for (int i = 0; i < n; i++) {
            double u = frnd.nextDouble();
            m[i] = kind == MaskKind.BOOL
                    ? (u < 0.25 ? 1 : 0)
                    : (u < 0.15 ? Float.NEGATIVE_INFINITY : (float) (-2 * frnd.nextDouble()));
        }
        return m;
    }

    /** softmax(q k^T / sqrt(D) + masks) v in double, straight from MaskSpec's javadoc. */
    static double[] reference(Case c, int d, float[] q, float[] k, float[] v, float[] mask, float[] kpm) {
        double[] out = new double[c.b * c.h * c.l * d];
        double scale = 1 / Math.sqrt(d);
        double[] sc = new double[c.s];
        for (int b = 0; b < c.b; b++)
            for (int h = 0; h < c.h; h++)
                for (int i = 0; i < c.l; i++) {
                    int bh = b * c.h + h;
                    double max = Double.NEGATIVE_INFINITY;
                    for (int j = 0; j < c.s; j++) {
                        double x = 0;
                        for (int e = 0; e < d; e++) x += (double) q[(bh * c.l + i) * d + e] * k[(bh * c.s + j) * d + e];
                        x *= scale;
                        if (c.causal && j > i) x = Double.NEGATIVE_INFINITY;
                        if (mask != null) {
                            int mb = c.mB == 0 ? 0 : (c.mB == 1 ? 0 : b), mh = c.mB == 0 ? 0 : (c.mH == 1 ? 0 : h);
                            int mhDim = c.mB == 0 ? 1 : c.mH;
                            float mv = mask[((mb * mhDim + mh) * c.l + i) * c.s + j];
                            x = c.mask == MaskKind.BOOL ? (mv != 0 ? Double.NEGATIVE_INFINITY : x) : x + mv;
                        }
                        if (kpm != null) {
                            float kv = kpm[b * c.s + j];
                            x = c.kpm == MaskKind.BOOL ? (kv != 0 ? Double.NEGATIVE_INFINITY : x) : x + kv;
                        }
                        sc[j] = x;
                        max = Math.max(max, x);
                    }
                    if (max == Double.NEGATIVE_INFINITY) continue; // every key masked: zero row
                    double sum = 0;
                    for (int j = 0; j < c.s; j++) sum += sc[j] = Math.exp(sc[j] - max);
                    for (int j = 0; j < c.s; j++)
                        for (int e = 0; e < d; e++)
                            out[(bh * c.l + i) * d + e] += sc[j] / sum * v[(bh * c.s + j) * d + e];
                }
        return out;
    }

    @Test
    void flashAttentionFp32EveryMaskAndHeadDim() {
        try (Backend be = open("attention", "flash")) {
            double worst = flashWorst(be, new int[] {32, 64, 128}, 1e-5, 2e-5, "flash fp32");
            System.out.println("[flash fp32] worst relative Frobenius error " + worst);
        }
    }

    /** Null when the 16-bit tensor-core kernels can run here, else why not (the test is then skipped). */
    abstract String no16BitReason();

    /**
     * The tensor-core flash kernels (flash_attention_bf16.cu) on the same cases as the fp32 one. Bounds: each of q, k,
     * v and the probabilities p is rounded once to 16 bits (unit round-off u = 2^-9 for bf16, 2^-12 for fp16), products
     * accumulate in fp32. A scaled score q.k / sqrt(D) then errs by about 2u sqrt(D) |q||k| / (sqrt(D) * D) ~ 2u/3 with
     * inputs uniform in [-1, 1] (random signs: the D rounding errors add like a random walk), which changes each
     * weight relatively by as much; rounding v and p adds 2u. So the output's relative error is at most about 3u ~
     * 6e-3 (bf16) / 7e-4 (fp16) in the typical case (the emulator measures 2.4e-3 and 3.1e-4: the errors partly
     * cancel); the bounds below, 2e-2 and 4e-3 relative Frobenius (5e-2 and 1e-2 absolute per element, outputs in
     * [-1, 1]), leave a 3-10x margin while an indexing, masking or rescaling bug (O(0.1) per element, O(1) relative)
     * still fails (checked by breaking the per-row rescaling once). On a GPU it needs compute capability 8.0 (skipped before); in the emulator
     * the mma.sync stand-in implements the PTX ISA fragment layouts.
     */
    @Test
    void flashAttention16BitTensorCores() {
        String why = no16BitReason();
        Assumptions.assumeTrue(why == null, why);
        try (Backend be = open("precision", "bf16", "attention", "flash")) {
            System.out.println("[flash bf16] worst relative Frobenius error "
                    + flashWorst(be, new int[] {64, 128}, 2e-2, 5e-2, "flash bf16"));
        }
        try (Backend be = open("precision", "fp16", "attention", "flash")) {
            System.out.println("[flash fp16] worst relative Frobenius error "
                    + flashWorst(be, new int[] {64, 128}, 4e-3, 1e-2, "flash fp16"));
        }
    }
}
