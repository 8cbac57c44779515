package io.attn.layers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.backend.Backend;
import io.attn.backend.BackendOptions;
import io.attn.backend.BackendProvider;
import io.attn.backend.Backends;
import io.attn.engine.AttentionWeights;
import io.attn.exec.Executor;
import io.attn.graph.GraphBuilder;
import io.attn.graph.MaskKind;
import io.attn.graph.Node;
import io.attn.nn.Embedding;
import io.attn.nn.Forward;
import io.attn.nn.Masks;
import io.attn.nn.PositionalEncoding;
import io.attn.nn.ScaledDotProductAttention;
import io.attn.nn.Similarity;
import io.attn.nn.StateDict;
import io.attn.nn.TransformerEncoder;
import io.attn.reference.layers.DTensor;
import io.attn.reference.layers.LayerConfig;
import io.attn.reference.layers.RandomStateDicts;
import io.attn.reference.layers.RefAttention;
import io.attn.reference.layers.RefEmbedding;
import io.attn.reference.layers.RefMath;
import io.attn.reference.layers.RefTransformer;
import io.attn.tensor.Tensor;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The tutorials' encoder-only pipeline (token ids -> Embedding -> sinusoidal positional encoding -> TransformerEncoder
 * -> cosine similarity of the context-aware embeddings) and the ScaledDotProductAttention layer, on every backend,
 * against the independent reference. Bound as in {@link io.attn.parity.LayerCases} (relative error <= 1e-5; cosine
 * similarities, values in [-1, 1], to 1e-5 absolute).
 */
class PipelineTest {
    interface Body {
        void run(Backend b) throws Exception;
    }

    static Stream<DynamicTest> onEveryBackend(String name, Body body) {
        List<DynamicTest> out = new ArrayList<>();
        for (BackendProvider p : Backends.providers())
            out.add(DynamicTest.dynamicTest(p.name() + ": " + name, () -> {
                var probe = p.probe();
                Assumptions.assumeTrue(probe.available(), () -> p.name() + " unavailable: " + probe.reason());
                try (Backend b = p.create(BackendOptions.defaults())) {
                    body.run(b);
                }
            }));
        return out.stream();
    }

    @TestFactory
    Stream<DynamicTest> encoderOnlyPipelineAndCosineSimilarity() {
        return onEveryBackend("ids -> embedding -> PE -> encoder -> cosine", b -> {
            int v = 11, e = 16, l = 6;
            int[] ids = {3, 7, 3, 0, 10, 3, 5, 5, 1, 2, 9, 4}; // (2, 6); token 3 repeats at different positions
            float[] idsF = new float[ids.length];
            for (int i = 0; i < ids.length; i++) idsF[i] = ids[i];
            LayerConfig c = LayerConfig.of(e, 4, 32).withActivation("gelu");
            Map<String, Tensor> sd = new LinkedHashMap<>(RandomStateDicts.encoder(c, 2, true, 7));
            Tensor table = RandomStateDicts.uniform(8, -1, 1, v, e);
            Map<String, Tensor> all = new LinkedHashMap<>(sd);
            all.put("embed.weight", table);

            StateDict weights = new StateDict(all, "pipeline");
            Embedding embed = Embedding.load(weights, "embed.", v, e);
            io.attn.nn.LayerConfig lc = io.attn.parity.LayerCases.engineLayer(c);
            Map<String, Tensor> encOnly = new LinkedHashMap<>(sd);
            TransformerEncoder enc = new TransformerEncoder(new StateDict(encOnly, "encoder"), "", lc, 2, true);
            GraphBuilder g = new GraphBuilder();
            Forward f = new Forward(g, AttentionWeights.NONE);
            Node x = PositionalEncoding.forward(f, embed.forward(f, g.input("ids", 2, l)), 0);
            Node out = enc.forward(f, x, Masks.NONE);
            Tensor got;
            try (Executor ex = new Executor(b, g.build(out))) {
                got = ex.run(Map.of("ids", Tensor.of(idsF, 2, l))).get(0);
            }
            DTensor emb = RefEmbedding.embedding(table, ids, 2, l);
            DTensor pe = RefEmbedding.sinusoidalPositionalEncoding(l, e, 0);
            double[] xs = emb.data().clone();
            for (int i = 0; i < xs.length; i++) xs[i] += pe.data()[i % (l * e)];
            DTensor want = RefTransformer.encoder(
                            sd, "", c, 2, true, new DTensor(new int[] {2, l, e}, xs).toTensor(), null, null, false)
                    .output();
            double err = io.attn.parity.LayerCases.relErr(got, want);
            assertTrue(err <= 1e-5, "encoder output relative error " + err);

            // cosine similarity of the context-aware embeddings of batch item 0
            Tensor rows = got.slice0(0, 1).reshape(l, e);
            Tensor sim = Similarity.cosine(rows, rows);
            for (int i = 0; i < l; i++)
                for (int j = 0; j < l; j++) {
                    double ref = RefMath.cosineSimilarity(
                            java.util.Arrays.copyOfRange(want.data(), i * e, (i + 1) * e),
                            java.util.Arrays.copyOfRange(want.data(), j * e, (j + 1) * e));
                    assertEquals(ref, sim.get(i, j), 1e-5, "cosine(" + i + ", " + j + ")");
                }
        });
    }

    @TestFactory
    Stream<DynamicTest> scaledDotProductAttentionLayer() {
        return onEveryBackend("ScaledDotProductAttention with mask, causal, per-head weights", b -> {
            Tensor q = RandomStateDicts.uniform(1, -2, 2, 2, 3, 5, 8);
            Tensor k = RandomStateDicts.uniform(2, -2, 2, 2, 3, 7, 8);
            Tensor v = RandomStateDicts.uniform(3, -2, 2, 2, 3, 7, 4);
            Tensor mask = Tensor.zeros(5, 7);
            mask.set(1f, 2, 0);
            mask.set(1f, 4, 1);
            for (AttentionWeights w : AttentionWeights.values()) {
                GraphBuilder g = new GraphBuilder();
                Forward f = new Forward(g, w);
                Node m = g.input("mask", 5, 7);
                Node o = ScaledDotProductAttention.forward(
                        f,
                        "sdpa",
                        g.input("q", q.shape()),
                        g.input("k", k.shape()),
                        g.input("v", v.shape()),
                        new Masks(m, MaskKind.BOOL, null, MaskKind.NONE, true),
                        Float.NaN);
                List<Node> outs = new ArrayList<>(List.of(o));
                outs.addAll(f.weightNodes().values());
                List<Tensor> got;
                try (Executor ex = new Executor(b, g.build(outs.toArray(Node[]::new)))) {
                    got = ex.run(Map.of("q", q, "k", k, "v", v, "mask", mask));
                }
                var ref = RefAttention.sdpa(q, k, v, mask, true, true, null);
                assertTrue(io.attn.parity.LayerCases.relErr(got.get(0), ref.output()) <= 1e-5, "sdpa output " + w);
                if (w == AttentionWeights.PER_HEAD)
                    assertTrue(io.attn.parity.LayerCases.relErr(got.get(1), ref.weights()) <= 1e-5, "sdpa weights");
                if (w == AttentionWeights.AVERAGED)
                    assertTrue(io.attn.parity.LayerCases.relErr(got.get(1), RefAttention.averageHeads(ref.weights()))
                            <= 1e-5);
                assertEquals(w == AttentionWeights.NONE ? 1 : 2, got.size());
            }
        });
    }
}
