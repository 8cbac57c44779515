package io.attn.parity;

import io.attn.engine.Precision;
import io.attn.graph.GraphBuilder;
import io.attn.graph.Node;
import io.attn.tensor.Shape;
import io.attn.tensor.Tensor;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;

/**
 * Builds one {@link ParityCase}: a {@link GraphBuilder} plus inputs drawn from a generator seeded by the case name (so a
 * case's data never changes between runs or when other cases are added).
 */
final class CaseBuilder {
    final String name;
    final long seed;
    final Random rnd;
    final GraphBuilder g = new GraphBuilder();
    private final Map<String, Tensor> inputs = new LinkedHashMap<>();

    CaseBuilder(String name) {
        this.name = name;
        this.seed = name.hashCode() * 0x9E3779B97F4A7C15L;
        this.rnd = new Random(seed);
    }

    /** A per-call input holding {@code t}. */
    Node in(String n, Tensor t) {
        inputs.put(n, t);
        return g.input(n, t.shape());
    }

    /** A per-call input of standard-normal values. */
    Node normal(String n, int... dims) {
        return in(n, normalT(1.0, dims));
    }

    /** A constant of standard-normal values. */
    Node constNormal(String n, int... dims) {
        return g.constant(n, normalT(1.0, dims));
    }

    Tensor normalT(double sigma, int... dims) {
        Shape s = Shape.of(dims);
        float[] d = new float[s.size()];
        for (int i = 0; i < d.length; i++) d[i] = (float) (sigma * rnd.nextGaussian());
        return Tensor.of(s, d);
    }

    /** Uniform values in [lo, hi). */
    Tensor uniformT(double lo, double hi, int... dims) {
        Shape s = Shape.of(dims);
        float[] d = new float[s.size()];
        for (int i = 0; i < d.length; i++) d[i] = (float) (lo + (hi - lo) * rnd.nextDouble());
        return Tensor.of(s, d);
    }

    /** 0/1 values, 1 (masked) with probability {@code p}. */
    Tensor boolT(double p, int... dims) {
        Shape s = Shape.of(dims);
        float[] d = new float[s.size()];
        for (int i = 0; i < d.length; i++) d[i] = rnd.nextDouble() < p ? 1f : 0f;
        return Tensor.of(s, d);
    }

    /** Additive mask: -inf with probability {@code pInf}, else a small finite value (sometimes exactly 0). */
    Tensor additiveT(double pInf, int... dims) {
        Shape s = Shape.of(dims);
        float[] d = new float[s.size()];
        for (int i = 0; i < d.length; i++) {
            double u = rnd.nextDouble();
            d[i] = u < pInf ? Float.NEGATIVE_INFINITY : u < 0.5 ? 0f : (float) rnd.nextGaussian();
        }
        return Tensor.of(s, d);
    }

    ParityCase done(Node out, double bound, String reason) {
        return done(out, bound, reason, Map.of());
    }

    /** A case with bounds of its own at reduced precisions ({@link ParityCase#reduced()}). */
    ParityCase done(Node out, double bound, String reason, Map<Precision, Double> reduced) {
        return new ParityCase(name, out.op(), g.build(out), inputs, seed, bound, reason, reduced);
    }
}
