package io.attn.cpu;

import static io.attn.cpu.Support.assertClose;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.AttnException;
import io.attn.graph.GraphBuilder;
import io.attn.graph.MaskKind;
import io.attn.graph.MaskSpec;
import io.attn.graph.Node;
import io.attn.tensor.Tensor;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The non-GEMM kernels against plain double-precision loops. */
class OpsTest {
    private final Random r = new Random(11);
    private static final int[] WIDTHS = {1, 3, 17, 63, 65, 1000};

    private static float[] run1(GraphBuilder g, Node out, Map<String, Tensor> in) {
        return Support.run(2, g.build(out), in).get(0).data();
    }

    private static double[][][][] raw(Tensor x) {
        int b = x.dim(0), h = x.dim(1), l = x.dim(2), s = x.dim(3);
        double[][][][] a = new double[b][h][l][s];
        for (int i = 0; i < b; i++)
            for (int j = 0; j < h; j++)
                for (int k = 0; k < l; k++) for (int m = 0; m < s; m++) a[i][j][k][m] = x.get(i, j, k, m);
        return a;
    }

    @Test
    void softmaxPlainEveryWidth() {
        for (int n : WIDTHS) {
            Tensor x = Support.tensor(r, 1, 1, 5, n);
            GraphBuilder g = new GraphBuilder();
            float[] got = run1(g, g.softmax(g.input("x", x.shape()), 0.7f, MaskSpec.NONE, null, null), Map.of("x", x));
            assertClose(got, MaskedRef.weights(raw(x), 0.7f, MaskSpec.NONE, null, null), "softmax n=" + n);
        }
    }

    @Test
    void softmaxWithMasks() {
        int b = 2, h = 3, l = 9, s = 65;
        Tensor x = Support.tensor(r, b, h, l, s);
        Tensor mask = Tensor.zeros(1, h, l, s), pad = Tensor.zeros(b, s);
        for (int i = 0; i < mask.size(); i++) mask.data()[i] = r.nextDouble() < 0.3 ? Float.NEGATIVE_INFINITY : 0.5f;
        for (int i = 0; i < pad.size(); i++) pad.data()[i] = r.nextDouble() < 0.2 ? 1f : 0f;
        for (int j = 0; j < s; j++) pad.set(1f, 1, j); // batch 1 fully padded -> zero rows
        MaskSpec spec = new MaskSpec(true, MaskKind.ADDITIVE, MaskKind.BOOL);
        GraphBuilder g = new GraphBuilder();
        Node out =
                g.softmax(g.input("x", x.shape()), 0.5f, spec, g.input("m", mask.shape()), g.input("p", pad.shape()));
        float[] got = run1(g, out, Map.of("x", x, "m", mask, "p", pad));
        assertClose(got, MaskedRef.weights(raw(x), 0.5f, spec, mask, pad), "masked softmax");
        for (int i = h * l * s; i < 2 * h * l * s; i++) assertEquals(0f, got[i]);
    }

    @Test
    void softmaxBoolMaskWithFiniteAdditivePadding() {
        int b = 2, h = 2, l = 6, s = 40;
        Tensor x = Support.tensor(r, b, h, l, s), mask = Tensor.zeros(l, s), pad = Support.tensor(r, b, s);
        for (int i = 0; i < mask.size(); i++) mask.data()[i] = r.nextDouble() < 0.4 ? 1f : 0f;
        for (int j = 0; j < s; j++) mask.set(1f, 2, j); // query 2 sees nothing
        MaskSpec spec = new MaskSpec(false, MaskKind.BOOL, MaskKind.ADDITIVE);
        GraphBuilder g = new GraphBuilder();
        Node out = g.softmax(g.input("x", x.shape()), 1f, spec, g.input("m", mask.shape()), g.input("p", pad.shape()));
        float[] got = run1(g, out, Map.of("x", x, "m", mask, "p", pad));
        assertClose(got, MaskedRef.weights(raw(x), 1f, spec, mask, pad), "bool mask + additive padding");
    }

    @Test
    void softmaxHugeScoresStayFinite() {
        Tensor x = Tensor.of(new float[] {3e38f, -3e38f, 5e37f, 3e38f, 0f}, 1, 5);
        GraphBuilder g = new GraphBuilder();
        float[] got = run1(g, g.softmax(g.input("x", x.shape()), 4f, MaskSpec.NONE, null, null), Map.of("x", x));
        // 4 * 3e38 overflows float (clamped to MAX_VALUE): both maxima tie and share the weight; 4 * 5e37 is far below
        assertArrayEquals(new float[] {0.5f, 0f, 0f, 0.5f, 0f}, got);
    }

    @Test
    void layerNormEveryWidth() {
        for (int n : WIDTHS) {
            Tensor x = Support.tensor(r, 4, n);
            for (int i = 0; i < x.size(); i++) x.data()[i] += 100f; // large mean: a one-pass variance would cancel
            Tensor w = Support.tensor(r, n), bias = Support.tensor(r, n);
            for (int variant = 0; variant < 3; variant++) {
                GraphBuilder g = new GraphBuilder();
                Node wn = variant < 2 ? g.input("w", w.shape()) : null;
                Node bn = variant < 1 ? g.input("b", bias.shape()) : null;
                Node out = g.layerNorm(g.input("x", x.shape()), wn, bn, 1e-5f);
                Map<String, Tensor> in = variant == 0
                        ? Map.of("x", x, "w", w, "b", bias)
                        : variant == 1 ? Map.of("x", x, "w", w) : Map.of("x", x);
                double[] want = new double[x.size()];
                for (int row = 0; row < 4; row++) {
                    double mean = 0, var = 0;
                    for (int c = 0; c < n; c++) mean += x.get(row, c);
                    mean /= n;
                    for (int c = 0; c < n; c++) var += (x.get(row, c) - mean) * (x.get(row, c) - mean);
                    var /= n;
                    for (int c = 0; c < n; c++) {
                        double y = (x.get(row, c) - mean) / Math.sqrt(var + 1e-5);
                        if (wn != null) y *= w.get(c);
                        if (bn != null) y += bias.get(c);
                        want[row * n + c] = y;
                    }
                }
                assertClose(run1(g, out, in), want, "layer_norm n=" + n + " variant " + variant);
            }
        }
    }

    @Test
    void geluBothFormsIncludingLargeArguments() {
        int n = 1003;
        Tensor x = Tensor.zeros(n);
        for (int i = 0; i < n; i++) x.data()[i] = (float) (-12 + 24.0 * i / (n - 1)); // covers both tails
        x.data()[0] = -1e30f;
        x.data()[1] = 1e30f;
        x.data()[2] = -60f;
        for (boolean tanh : new boolean[] {false, true}) {
            GraphBuilder g = new GraphBuilder();
            float[] got = run1(g, g.gelu(g.input("x", x.shape()), tanh), Map.of("x", x));
            double[] want = new double[n];
            for (int i = 0; i < n; i++) {
                double v = x.data()[i];
                want[i] = tanh
                        ? 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v * v * v)))
                        : 0.5 * v * erfc(-v / Math.sqrt(2));
            }
            want[0] = 0; // -1e30: the double formula itself gives -0 or NaN (inf * 0); GELU tends to 0
            assertClose(got, want, "gelu tanh=" + tanh);
            // element-wise: every value with |gelu| > 1e-3 within 1e-6 relative (1e-7 absolute for the rest)
            for (int i = 2; i < n; i++)
                assertTrue(
                        Math.abs(got[i] - want[i]) <= 1e-6 * Math.abs(want[i]) + 1e-7,
                        "gelu tanh=" + tanh + " x=" + x.data()[i] + ": " + got[i] + " vs " + want[i]);
            assertEquals(0f, got[0], 0f);
            assertEquals(1e30f, got[1]);
        }
    }

    /** erfc in double: the Taylor series of erf below 3, the continued fraction of erfc above (both ~1e-15). */
    static double erfc(double z) {
        if (z < 0) return 2 - erfc(-z);
        if (z < 3) { // Taylor series of erf, converges fast below 3
            double sum = 0, term = z;
            for (int k = 0; k < 200; k++) {
                sum += term / (2 * k + 1);
                term *= -z * z / (k + 1);
            }
            return 1 - 2 / Math.sqrt(Math.PI) * sum;
        }
        // erfc(z) = exp(-z^2)/sqrt(pi) / (z + 1/2 / (z + 1 / (z + 3/2 / (z + ...)))), evaluated bottom-up
        double f = 0;
        for (int k = 60; k >= 1; k--) f = k / 2.0 / (z + f);
        return Math.exp(-z * z) / Math.sqrt(Math.PI) / (z + f);
    }

    @Test
    void elementwiseOps() {
        for (int n : WIDTHS) {
            Tensor a = Support.tensor(r, 3, n), b = Support.tensor(r, 3, n), bias = Support.tensor(r, n);
            double[] sum = new double[3 * n],
                    biased = new double[3 * n],
                    scaled = new double[3 * n],
                    relu = new double[3 * n];
            for (int i = 0; i < 3 * n; i++) {
                sum[i] = (double) a.data()[i] + b.data()[i];
                biased[i] = (double) a.data()[i] + bias.data()[i % n];
                scaled[i] = -1.5 * a.data()[i];
                relu[i] = Math.max(0, a.data()[i]);
            }
            GraphBuilder g = new GraphBuilder();
            Node x = g.input("a", a.shape()), y = g.input("b", b.shape()), bi = g.input("bias", bias.shape());
            var outs = Support.run(
                    1,
                    g.build(g.add(x, y), g.addBias(x, bi), g.scale(x, -1.5f), g.relu(x)),
                    Map.of("a", a, "b", b, "bias", bias));
            assertClose(outs.get(0).data(), sum, "add n=" + n);
            assertClose(outs.get(1).data(), biased, "add_bias n=" + n);
            assertClose(outs.get(2).data(), scaled, "scale n=" + n);
            assertClose(outs.get(3).data(), relu, "relu n=" + n);
        }
    }

    @Test
    void embeddingLooksUpRowsAndRejectsBadIds() {
        Tensor table = Support.tensor(r, 10, 6);
        Tensor ids = Tensor.of(new float[] {3, 0, 9, 3}, 2, 2);
        GraphBuilder g = new GraphBuilder();
        var graph = g.build(g.embedding(g.input("ids", ids.shape()), g.input("t", table.shape())));
        float[] got =
                Support.run(1, graph, Map.of("ids", ids, "t", table)).get(0).data();
        for (int i = 0; i < 4; i++)
            for (int c = 0; c < 6; c++) assertEquals(table.get((int) ids.data()[i], c), got[i * 6 + c]);
        for (float bad : new float[] {10f, -1f, 2.5f, Float.NaN}) {
            Tensor badIds = Tensor.of(new float[] {1, bad, 2, 3}, 2, 2);
            AttnException e =
                    assertThrows(AttnException.class, () -> Support.run(1, graph, Map.of("ids", badIds, "t", table)));
            assertEquals(AttnException.Code.BAD_INPUT, e.code());
            assertTrue(
                    e.getMessage().contains(String.valueOf(bad))
                            && e.getMessage().contains("10"),
                    e.getMessage());
        }
    }

    @Test
    void positionalEncodingWithLargeOffset() {
        for (int e : new int[] {1, 6, 65}) {
            int offset = 16380;
            Tensor x = Support.tensor(r, 2, 7, e);
            GraphBuilder g = new GraphBuilder();
            float[] got = run1(g, g.positionalEncoding(g.input("x", x.shape()), offset), Map.of("x", x));
            double[] want = new double[x.size()];
            for (int b = 0; b < 2; b++)
                for (int l = 0; l < 7; l++)
                    for (int c = 0; c < e; c++) {
                        int i2 = c - c % 2;
                        double angle = (offset + l) / Math.pow(10000, (double) i2 / e);
                        want[(b * 7 + l) * e + c] = x.get(b, l, c) + (c % 2 == 0 ? Math.sin(angle) : Math.cos(angle));
                    }
            assertClose(got, want, "positional encoding E=" + e);
        }
    }

    @Test
    void headsConcatAndMean() {
        int b = 2, l = 5, h = 3, d = 4;
        Tensor x = Support.tensor(r, b, l, h * d);
        GraphBuilder g = new GraphBuilder();
        Node in = g.input("x", x.shape());
        Node split = g.splitHeads(in, h);
        var outs = Support.run(
                1,
                g.build(split, g.mergeHeads(split), g.concat(1, in, in), g.concat(2, in, in), g.mean(split, 1)),
                Map.of("x", x));
        float[] sp = outs.get(0).data();
        double[] mean = new double[b * l * d];
        for (int bb = 0; bb < b; bb++)
            for (int hh = 0; hh < h; hh++)
                for (int ll = 0; ll < l; ll++)
                    for (int dd = 0; dd < d; dd++) {
                        float v = x.get(bb, ll, hh * d + dd);
                        assertEquals(v, sp[((bb * h + hh) * l + ll) * d + dd]);
                        mean[(bb * l + ll) * d + dd] += v / (double) h;
                    }
        assertArrayEquals(x.data(), outs.get(1).data());
        float[] c1 = outs.get(2).data(), c2 = outs.get(3).data();
        int e = h * d;
        for (int bb = 0; bb < b; bb++)
            for (int ll = 0; ll < l; ll++)
                for (int c = 0; c < e; c++) {
                    float v = x.get(bb, ll, c);
                    assertEquals(v, c1[(bb * 2 * l + ll) * e + c]);
                    assertEquals(v, c1[(bb * 2 * l + l + ll) * e + c]);
                    assertEquals(v, c2[(bb * l + ll) * 2 * e + c]);
                    assertEquals(v, c2[(bb * l + ll) * 2 * e + e + c]);
                }
        assertClose(outs.get(4).data(), mean, "mean over heads");
    }

    @Test
    void meanOverLastAxisAndConcatOfThree() {
        Tensor x = Support.tensor(r, 3, 67);
        GraphBuilder g = new GraphBuilder();
        Node in = g.input("x", x.shape());
        var outs = Support.run(1, g.build(g.mean(in, -1), g.concat(0, in, in, in)), Map.of("x", x));
        double[] want = new double[3];
        for (int i = 0; i < 3; i++) {
            for (int c = 0; c < 67; c++) want[i] += x.get(i, c);
            want[i] /= 67;
        }
        assertClose(outs.get(0).data(), want, "mean last axis");
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < x.size(); i++)
                assertEquals(x.data()[i], outs.get(1).data()[k * x.size() + i]);
    }
}
