package io.attn.reference.layers;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.attn.reference.layers.RefTransformer.DecoderLayerResult;
import io.attn.reference.layers.RefTransformer.DecoderResult;
import io.attn.reference.layers.RefTransformer.EncoderLayerResult;
import io.attn.reference.layers.RefTransformer.EncoderResult;
import io.attn.reference.layers.RefTransformer.TransformerResult;
import io.attn.tensor.Tensor;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Hand-checkable transformer layers: weights chosen so that attention is uniform or constant and the feed-forward is
 * zero or the identity, leaving residual + LayerNorm arithmetic that the test recomputes with its own 3-element
 * LayerNorm. Tolerance 1e-12: the expected values are exact real-arithmetic identities evaluated in double.
 */
class RefTransformerTest {
    private static final double TOL = 1e-12;
    private static final double EPS = 1e-5;

    @Test
    void postNormEncoderLayerWithZeroFeedForwardIsLayerNormOfResidual() {
        LayerConfig cfg = LayerConfig.of(3, 1, 4);
        Map<String, Tensor> sd = RandomStateDicts.encoderLayer(cfg, 1);
        // q = k = 0 (uniform weights), v = bias c, out_proj = I: attention adds c = [0, 1, 2] at every position
        zero(sd, "self_attn.", "linear1.", "linear2.");
        sd.put("self_attn.in_proj_bias", vec(0, 0, 0, 0, 0, 0, 0, 1, 2));
        sd.put("self_attn.out_proj.weight", eye(3));
        sd.put("norm1.weight", vec(2, 1, 0.5));
        sd.put("norm1.bias", vec(0, 1, -1));
        sd.put("norm2.weight", vec(1, 1, 1));
        sd.put("norm2.bias", vec(0.5, 0.5, 0.5));
        Tensor x = Tensor.of(new float[] {1, 2, 3, 0, -1, 0.5f}, 1, 2, 3);
        EncoderLayerResult r = RefTransformer.encoderLayer(sd, "", cfg, x, null, null, false);
        double[][] rows = {{1, 2, 3}, {0, -1, 0.5}};
        for (int l = 0; l < 2; l++) {
            double[] y = ln(add(rows[l], new double[] {0, 1, 2}), new double[] {2, 1, 0.5}, new double[] {0, 1, -1});
            double[] z = ln(y, new double[] {1, 1, 1}, new double[] {0.5, 0.5, 0.5});
            assertArrayEquals(z, row(r.output(), 0, l), TOL);
        }
        // row 0 by hand: x + c = [1,3,5], k = 2/sqrt(8/3 + 1e-5): norm1 gives [-2k, 1, k/2 - 1]
        double k = 2 / Math.sqrt(8.0 / 3 + EPS);
        assertArrayEquals(
                ln(new double[] {-2 * k, 1, k / 2 - 1}, new double[] {1, 1, 1}, new double[] {.5, .5, .5}),
                row(r.output(), 0, 0),
                TOL);
        assertArrayEquals(new double[] {0.5, 0.5, 0.5, 0.5}, r.selfAttnWeights().data(), TOL);
        assertArrayEquals(new int[] {1, 1, 2, 2}, r.selfAttnHeadWeights().shape());
    }

    @Test
    void preNormEncoderLayerAddsFeedForwardOfNormalisedInput() {
        for (String act : new String[] {"relu", "gelu"}) {
            LayerConfig cfg = LayerConfig.of(3, 1, 3).withNormFirst(true).withActivation(act);
            Map<String, Tensor> sd = RandomStateDicts.encoderLayer(cfg, 2);
            zero(sd, "self_attn.", "linear1.bias", "norm2.bias");
            sd.put("linear1.weight", eye(3));
            sd.put("linear2.weight", eye(3));
            sd.put("linear2.bias", vec(0.125, 0.25, 0.375)); // exact in float32
            sd.put("norm2.weight", vec(1, 1, 1));
            Tensor x = Tensor.of(new float[] {1, 2, 3}, 1, 1, 3);
            EncoderLayerResult r = RefTransformer.encoderLayer(sd, "", cfg, x, null, null, false);
            // x + act(LN([1,2,3])) + d with LN([1,2,3]) = [-k, 0, k]
            double k = 1.2247356859083902;
            double[] f =
                    act.equals("relu") ? new double[] {0, 0, k} : new double[] {RefMath.gelu(-k), 0, RefMath.gelu(k)};
            assertArrayEquals(
                    new double[] {1 + f[0] + 0.125, 2 + f[1] + 0.25, 3 + f[2] + 0.375},
                    row(r.output(), 0, 0),
                    TOL,
                    act);
        }
    }

    @Test
    void preNormDecoderLayerAddsMeanOfUnmaskedMemory() {
        LayerConfig cfg = LayerConfig.of(3, 1, 4).withNormFirst(true);
        Map<String, Tensor> sd = crossAveragingDecoderLayer(cfg);
        Tensor tgt = Tensor.of(new float[] {1, 2, 3, -1, 0, 4, 2, 2, 0}, 1, 3, 3);
        Tensor mem = Tensor.of(new float[] {1, 0, 0, 0, 0, 2, 4, 4, 4}, 1, 3, 3);
        DecoderLayerResult r = RefTransformer.decoderLayer(sd, "", cfg, tgt, mem, null, null, null, null, true);
        // cross attention: uniform over memory rows, value = memory: adds the memory mean [5/3, 4/3, 2]
        for (int t = 0; t < 3; t++)
            for (int c = 0; c < 3; c++)
                assertEquals(
                        tgt.get(0, t, c) + ((double) mem.get(0, 0, c) + mem.get(0, 1, c) + mem.get(0, 2, c)) / 3,
                        r.output().get(0, t, c),
                        TOL);
        // causal self attention with q = k = 0: row t spreads 1/(t+1) over keys 0..t
        for (int t = 0; t < 3; t++)
            for (int j = 0; j < 3; j++)
                assertEquals(j <= t ? 1.0 / (t + 1) : 0.0, r.selfAttnWeights().get(0, t, j), TOL);
        // memory key padding on row 2: the mean is over rows 0 and 1 only
        Tensor mkpm = Tensor.of(new float[] {0, 0, 1}, 1, 3);
        DecoderLayerResult p =
                RefTransformer.decoderLayer(sd, "", cfg, tgt, mem, null, null, null, Mask.bool(mkpm), false);
        for (int c = 0; c < 3; c++)
            assertEquals(
                    tgt.get(0, 1, c) + (mem.get(0, 0, c) + mem.get(0, 1, c)) / 2,
                    p.output().get(0, 1, c),
                    TOL);
        assertArrayEquals(new double[] {0.5, 0.5, 0}, row(p.crossAttnWeights(), 0, 0), TOL);
        assertArrayEquals(new int[] {1, 1, 3, 3}, p.crossAttnHeadWeights().shape());
    }

    @Test
    void postNormDecoderLayerNormalisesAfterEachBlock() {
        LayerConfig cfg = LayerConfig.of(3, 1, 4);
        Map<String, Tensor> sd = crossAveragingDecoderLayer(cfg);
        Tensor tgt = Tensor.of(new float[] {1, 2, 3}, 1, 1, 3);
        Tensor mem = Tensor.of(new float[] {1, 0, 0, 0, 0, 2}, 1, 2, 3);
        DecoderLayerResult r = RefTransformer.decoderLayer(sd, "", cfg, tgt, mem, null, null, null, null, false);
        double[] one = {1, 1, 1}, zero = {0, 0, 0};
        double[] y1 = ln(new double[] {1, 2, 3}, one, zero); // + self-attention 0
        double[] y2 = ln(add(y1, new double[] {0.5, 0, 1}), one, zero); // + memory mean
        double[] y3 = ln(y2, one, zero); // + feed-forward 0
        assertArrayEquals(y3, row(r.output(), 0, 0), TOL);
    }

    @Test
    void encoderStackRunsLayersInOrderThenFinalNorm() {
        LayerConfig cfg = LayerConfig.of(3, 1, 2).withNormFirst(true);
        Map<String, Tensor> sd = RandomStateDicts.encoder(cfg, 2, true, 3);
        zero(sd, "layers.0.self_attn.", "layers.0.linear", "layers.1.self_attn.", "layers.1.linear");
        sd.put("layers.0.linear2.bias", vec(1, 0, 0));
        sd.put("layers.1.linear2.bias", vec(0, 0, 2));
        sd.put("norm.weight", vec(2, 1, 0.5));
        sd.put("norm.bias", vec(0, 1, -1));
        Tensor x = Tensor.of(new float[] {1, 2, 3}, 1, 1, 3);
        EncoderResult r = RefTransformer.encoder(sd, "", cfg, 2, true, x, null, null, false);
        assertEquals(2, r.layers().size());
        assertArrayEquals(new double[] {2, 2, 3}, row(r.layers().get(0).output(), 0, 0), TOL);
        assertArrayEquals(new double[] {2, 2, 5}, row(r.layers().get(1).output(), 0, 0), TOL);
        assertArrayEquals(
                ln(new double[] {2, 2, 5}, new double[] {2, 1, 0.5}, new double[] {0, 1, -1}),
                row(r.output(), 0, 0),
                TOL);
        EncoderResult noNorm = RefTransformer.encoder(sd, "", cfg, 2, false, x, null, null, false);
        assertArrayEquals(new double[] {2, 2, 5}, row(noNorm.output(), 0, 0), TOL);
    }

    @Test
    void transformerFeedsEncoderMemoryToDecoderUnderItsPrefixes() {
        LayerConfig lc = LayerConfig.of(3, 1, 4).withNormFirst(true);
        TransformerConfig cfg = new TransformerConfig(2, 2, lc);
        Map<String, Tensor> sd = RandomStateDicts.transformer(cfg, 4);
        // decoder: layer 0 cross-attention averages the memory, everything else in the decoder layers is zero
        zero(sd, "decoder.layers.");
        for (int n = 0; n < 2; n++)
            for (String norm : new String[] {"norm1", "norm2", "norm3"})
                sd.put("decoder.layers." + n + "." + norm + ".weight", vec(1, 1, 1));
        Tensor in = Tensor.zeros(9, 3);
        for (int i = 0; i < 3; i++) in.set(1, 6 + i, i);
        sd.put("decoder.layers.0.multihead_attn.in_proj_weight", in);
        sd.put("decoder.layers.0.multihead_attn.out_proj.weight", eye(3));
        sd.put("decoder.layers.1.linear2.bias", vec(0, 0.5, 0));
        Tensor src = RandomStateDicts.uniform(5, -1, 1, 1, 2, 3);
        Tensor tgt = Tensor.of(new float[] {1, 2, 3}, 1, 1, 3);
        TransformerResult r = RefTransformer.transformer(sd, cfg, src, tgt, true, null, null, null);
        EncoderResult enc = RefTransformer.encoder(sd, "encoder.", lc, 2, true, src, null, null, false);
        assertArrayEquals(enc.output().data(), r.encoder().output().data(), 0.0);
        DTensor mem = enc.output();
        double[] expect = new double[3];
        for (int c = 0; c < 3; c++) expect[c] = tgt.get(0, 0, c) + (mem.get(0, 0, c) + mem.get(0, 1, c)) / 2;
        expect[1] += 0.5;
        double[] w = new double[3], b = new double[3];
        for (int c = 0; c < 3; c++) {
            w[c] = sd.get("decoder.norm.weight").get(c);
            b[c] = sd.get("decoder.norm.bias").get(c);
        }
        assertArrayEquals(ln(expect, w, b), row(r.output(), 0, 0), TOL);
        DecoderResult dec = r.decoder();
        assertEquals(2, dec.layers().size());
    }

    /** Decoder layer: self-attention and FF zero; cross attention q = k = 0, v = memory, out_proj = I; norms w=1,b=0. */
    private static Map<String, Tensor> crossAveragingDecoderLayer(LayerConfig cfg) {
        Map<String, Tensor> sd = RandomStateDicts.decoderLayer(cfg, 7);
        zero(sd, "");
        for (String norm : new String[] {"norm1", "norm2", "norm3"}) sd.put(norm + ".weight", vec(1, 1, 1));
        Tensor in = Tensor.zeros(9, 3);
        for (int i = 0; i < 3; i++) in.set(1, 6 + i, i);
        sd.put("multihead_attn.in_proj_weight", in);
        sd.put("multihead_attn.out_proj.weight", eye(3));
        return sd;
    }

    /** Replaces every entry whose name starts with one of the prefixes by zeros of the same shape. */
    private static void zero(Map<String, Tensor> sd, String... prefixes) {
        for (Map.Entry<String, Tensor> e : sd.entrySet())
            for (String p : prefixes)
                if (e.getKey().startsWith(p))
                    e.setValue(Tensor.zeros(e.getValue().shape()));
    }

    private static Tensor vec(double... v) {
        float[] f = new float[v.length];
        for (int i = 0; i < v.length; i++) f[i] = (float) v[i];
        return Tensor.of(f, v.length);
    }

    private static Tensor eye(int n) {
        Tensor t = Tensor.zeros(n, n);
        for (int i = 0; i < n; i++) t.set(1, i, i);
        return t;
    }

    /** Test-local LayerNorm of one row (biased variance, eps 1e-5 inside the sqrt). */
    private static double[] ln(double[] x, double[] w, double[] b) {
        double mean = 0, var = 0;
        for (double v : x) mean += v / x.length;
        for (double v : x) var += (v - mean) * (v - mean) / x.length;
        double[] y = new double[x.length];
        for (int i = 0; i < x.length; i++) y[i] = (x[i] - mean) / Math.sqrt(var + EPS) * w[i] + b[i];
        return y;
    }

    private static double[] add(double[] a, double[] b) {
        double[] y = new double[a.length];
        for (int i = 0; i < a.length; i++) y[i] = a[i] + b[i];
        return y;
    }

    /** Row (b, t, :) of a rank-3 tensor. */
    private static double[] row(DTensor t, int b, int r) {
        int n = t.dim(2);
        double[] out = new double[n];
        System.arraycopy(t.data(), (b * t.dim(1) + r) * n, out, 0, n);
        return out;
    }
}
