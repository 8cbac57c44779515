package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.io.Npy;
import io.attn.io.Npz;
import io.attn.io.SafeTensors;
import io.attn.reference.layers.DTensor;
import io.attn.reference.layers.LayerConfig;
import io.attn.reference.layers.Mask;
import io.attn.reference.layers.RandomStateDicts;
import io.attn.reference.layers.RefAttention;
import io.attn.reference.layers.RefTransformer;
import io.attn.reference.layers.TransformerConfig;
import io.attn.tensor.Tensor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code attn run} end to end: PyTorch-named weights in a safetensors file (config in its metadata or a JSON file),
 * inputs as .npy, outputs and attention weights compared with the independent double-precision reference (relative
 * Frobenius error <= 1e-5, the engine's fp32 bound; see ParityTest). Bad inputs: exit code, one line, no output.
 */
class RunCommandTest {
    @TempDir
    Path dir;

    record Result(int code, String out, String err) {}

    static Result cli(String... args) {
        PrintStream so = System.out, se = System.err;
        ByteArrayOutputStream out = new ByteArrayOutputStream(), err = new ByteArrayOutputStream();
        int code;
        try (PrintStream po = new PrintStream(out, true, StandardCharsets.UTF_8);
                PrintStream pe = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            System.setOut(po);
            System.setErr(pe);
            code = Main.execute(args);
        } finally {
            System.setOut(so);
            System.setErr(se);
        }
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    Path model(String name, Map<String, Tensor> sd, String config) {
        Path p = dir.resolve(name + ".safetensors");
        SafeTensors.write(p, sd, config == null ? Map.of() : Map.of("config", config));
        return p;
    }

    Path npy(String name, Tensor t) {
        Path p = dir.resolve(name + ".npy");
        Npy.write(p, t);
        return p;
    }

    /** {@code t} (0/1) as a NumPy bool array, as {@code np.save} writes a bool mask. */
    Path boolNpy(String name, Tensor t) {
        return typedNpy(dir.resolve(name + ".npy"), t, "|b1");
    }

    /** {@code t} as an .npy of dtype {@code |b1} (bool) or {@code <i8} (int64), as {@code np.save} writes them. */
    static Path typedNpy(Path p, Tensor t, String descr) {
        StringBuilder shape = new StringBuilder("(");
        for (int i = 0; i < t.rank(); i++) shape.append(i > 0 ? ", " : "").append(t.dim(i));
        String header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape
                + (t.rank() == 1 ? ",)" : ")") + ", }";
        header += " ".repeat(63 - (10 + header.length()) % 64) + "\n";
        byte[] h = header.getBytes(StandardCharsets.ISO_8859_1);
        int width = descr.equals("|b1") ? 1 : 8;
        java.nio.ByteBuffer b =
                java.nio.ByteBuffer.allocate(10 + h.length + width * t.size()).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        b.put(new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0})
                .putShort((short) h.length)
                .put(h);
        for (float v : t.data())
            if (width == 1) b.put((byte) (v != 0 ? 1 : 0));
            else b.putLong((long) v);
        try {
            Files.write(p, b.array());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return p;
    }

    static double relErr(Tensor got, DTensor want) {
        assertEquals(Arrays.toString(want.shape()), Arrays.toString(got.shape().dims()), "shape");
        double num = 0, den = 0;
        for (int i = 0; i < got.size(); i++) {
            double d = got.data()[i] - want.data()[i];
            num += d * d;
            den += want.data()[i] * want.data()[i];
        }
        return Math.sqrt(num) / Math.max(Math.sqrt(den), 1e-30);
    }

    static void close(Tensor got, DTensor want, String what) {
        double e = relErr(got, want);
        assertTrue(e <= 1e-5, what + ": relative error " + e);
    }

    static Result ok(String... args) {
        Result r = cli(args);
        assertEquals(0, r.code(), () -> "exit code; stderr: " + r.err());
        return r;
    }

    @Test
    void multiheadAttentionSelfAndCrossWithWeights() {
        var sd = RandomStateDicts.multiheadAttention(8, true, 1);
        Path m = model("mha", sd, "{\"module\":\"MultiheadAttention\",\"embed_dim\":8,\"num_heads\":2,\"bias\":true}");
        Tensor q = RandomStateDicts.uniform(2, -1, 1, 2, 5, 8), mem = RandomStateDicts.uniform(3, -1, 1, 2, 7, 8);
        Tensor kp = Tensor.zeros(2, 7);
        kp.set(1f, 1, 6);
        kp.set(1f, 1, 5);
        ok(
                "run",
                "--model",
                m.toString(),
                "--input",
                npy("q", q).toString(),
                "--memory",
                npy("m", mem).toString(),
                "--key-padding-mask",
                boolNpy("kp", kp).toString(),
                "--output",
                dir.resolve("y.npy").toString(),
                "--attention-weights",
                dir.resolve("w.npy").toString(),
                "--device",
                "cpu");
        var want = RefAttention.multiheadAttention(sd, "", 8, 2, q, mem, mem, kp, null, false, false, true, true);
        close(Npy.read(dir.resolve("y.npy")), want.output(), "output");
        close(Npy.read(dir.resolve("w.npy")), want.weights(), "weights (B, L, S)");
        // per head, causal self-attention, unbatched (L, E) input
        Tensor x = RandomStateDicts.uniform(4, -1, 1, 6, 8);
        ok(
                "run",
                "--model",
                m.toString(),
                "--input",
                npy("x", x).toString(),
                "--causal",
                "--per-head",
                "--output",
                dir.resolve("y2.npy").toString(),
                "--attention-weights",
                dir.resolve("w2.npy").toString(),
                "--heatmap",
                dir.resolve("a.png").toString());
        Tensor xb = x.reshape(1, 6, 8);
        var w2 = RefAttention.multiheadAttention(sd, "", 8, 2, xb, xb, xb, null, null, false, true, true, false);
        close(Npy.read(dir.resolve("y2.npy")), w2.output().reshape(6, 8), "unbatched output");
        close(Npy.read(dir.resolve("w2.npy")), w2.weights().reshape(2, 6, 6), "per-head weights (H, L, S)");
        assertTrue(Files.exists(dir.resolve("a.png")));
    }

    @Test
    void encoderAndDecoderStacksWithNpzWeightsAndConfigFile() throws IOException {
        LayerConfig c = LayerConfig.of(8, 2, 16).withNormFirst(true).withActivation("gelu");
        var sd = RandomStateDicts.encoder(c, 2, true, 5);
        Path cfg = dir.resolve("enc.json");
        Files.writeString(
                cfg,
                "{\"module\":\"TransformerEncoder\",\"d_model\":8,\"nhead\":2,\"dim_feedforward\":16,"
                        + "\"activation\":\"gelu\",\"layer_norm_eps\":1e-5,\"norm_first\":true,\"num_layers\":2,\"final_norm\":true}");
        Path m = model("enc", sd, null);
        Tensor src = RandomStateDicts.uniform(6, -1, 1, 2, 5, 8);
        ok(
                "run",
                "--model",
                m.toString(),
                "--config",
                cfg.toString(),
                "--input",
                npy("src", src).toString(),
                "--output",
                dir.resolve("enc_out.npy").toString(),
                "--attention-weights",
                dir.resolve("w.npz").toString());
        var want = RefTransformer.encoder(sd, "", c, 2, true, src, null, null, false);
        close(Npy.read(dir.resolve("enc_out.npy")), want.output(), "encoder output");
        Map<String, Tensor> w = Npz.read(dir.resolve("w.npz"));
        assertEquals(List.of("layers.0.self_attn", "layers.1.self_attn"), new ArrayList<>(w.keySet()));
        close(w.get("layers.1.self_attn"), want.layers().get(1).selfAttnWeights(), "layer 1 weights");

        LayerConfig dc = LayerConfig.of(8, 2, 16);
        var dsd = RandomStateDicts.decoderLayer(dc, 7);
        Path dm = model(
                "dec",
                dsd,
                "{\"module\":\"TransformerDecoderLayer\",\"d_model\":8,\"nhead\":2,\"dim_feedforward\":16}");
        Tensor tgt = RandomStateDicts.uniform(8, -1, 1, 2, 4, 8), mem = RandomStateDicts.uniform(9, -1, 1, 2, 6, 8);
        ok(
                "run",
                "--model",
                dm.toString(),
                "--input",
                npy("tgt", tgt).toString(),
                "--memory",
                npy("mem", mem).toString(),
                "--causal",
                "--output",
                dir.resolve("dec_out.npy").toString());
        var dw = RefTransformer.decoderLayer(dsd, "", dc, tgt, mem, null, null, null, null, true);
        close(Npy.read(dir.resolve("dec_out.npy")), dw.output(), "decoder output");
    }

    @Test
    void transformerWithTarget() {
        TransformerConfig tc = new TransformerConfig(1, 2, LayerConfig.of(8, 2, 16));
        var sd = RandomStateDicts.transformer(tc, 10);
        Path m = model(
                "t",
                sd,
                "{\"module\":\"Transformer\",\"d_model\":8,\"nhead\":2,\"num_encoder_layers\":1,"
                        + "\"num_decoder_layers\":2,\"dim_feedforward\":16}");
        Tensor src = RandomStateDicts.uniform(11, -1, 1, 1, 6, 8), tgt = RandomStateDicts.uniform(12, -1, 1, 1, 3, 8);
        ok(
                "run",
                "--model",
                m.toString(),
                "--input",
                npy("src", src).toString(),
                "--target",
                npy("tgt", tgt).toString(),
                "--causal",
                "--output",
                dir.resolve("t_out.npy").toString());
        var want = RefTransformer.transformer(sd, tc, src, tgt, true, (Mask) null, null, null);
        close(Npy.read(dir.resolve("t_out.npy")), want.output(), "transformer output");
    }

    @Test
    void remainingModuleKindsThroughTheCli() {
        // encoder layer, post-norm relu, key padding, weights as .npz (one block) and as .npy (allowed: one block)
        LayerConfig c = LayerConfig.of(8, 2, 16);
        var esd = RandomStateDicts.encoderLayer(c, 20);
        Path em = model(
                "el", esd, "{\"module\":\"TransformerEncoderLayer\",\"d_model\":8,\"nhead\":2,\"dim_feedforward\":16}");
        Tensor src = RandomStateDicts.uniform(21, -1, 1, 2, 6, 8);
        Tensor kp = Tensor.zeros(2, 6);
        kp.set(1f, 0, 5);
        ok(
                "run",
                "--model",
                em.toString(),
                "--input",
                npy("s", src).toString(),
                "--key-padding-mask",
                boolNpy("p", kp).toString(),
                "--output",
                dir.resolve("el.npy").toString(),
                "--attention-weights",
                dir.resolve("elw.npz").toString());
        var ew = RefTransformer.encoderLayer(esd, "", c, src, null, Mask.bool(kp), false);
        close(Npy.read(dir.resolve("el.npy")), ew.output(), "encoder layer");
        close(Npz.read(dir.resolve("elw.npz")).get("self_attn"), ew.selfAttnWeights(), "encoder layer weights");

        // decoder stack with final norm, gelu, pre-norm
        LayerConfig dc = LayerConfig.of(8, 4, 12).withNormFirst(true).withActivation("gelu");
        var dsd = RandomStateDicts.decoder(dc, 2, true, 22);
        Path dm = model(
                "ds",
                dsd,
                "{\"module\":\"TransformerDecoder\",\"d_model\":8,\"nhead\":4,\"dim_feedforward\":12,"
                        + "\"activation\":\"gelu\",\"norm_first\":true,\"num_layers\":2,\"final_norm\":true}");
        Tensor tgt = RandomStateDicts.uniform(23, -1, 1, 1, 4, 8), mem = RandomStateDicts.uniform(24, -1, 1, 1, 5, 8);
        ok(
                "run",
                "--model",
                dm.toString(),
                "--input",
                npy("t", tgt).toString(),
                "--memory",
                npy("m", mem).toString(),
                "--causal",
                "--output",
                dir.resolve("ds.npy").toString(),
                "--attention-weights",
                dir.resolve("dsw.npz").toString(),
                "--per-head");
        var dw = RefTransformer.decoder(dsd, "", dc, 2, true, tgt, mem, null, null, null, null, true);
        close(Npy.read(dir.resolve("ds.npy")), dw.output(), "decoder stack");
        Map<String, Tensor> w = Npz.read(dir.resolve("dsw.npz"));
        assertEquals(
                List.of(
                        "layers.0.self_attn",
                        "layers.0.multihead_attn",
                        "layers.1.self_attn",
                        "layers.1.multihead_attn"),
                new ArrayList<>(w.keySet()));
        close(w.get("layers.1.multihead_attn"), dw.layers().get(1).crossAttnHeadWeights(), "cross weights per head");
    }

    @Test
    void textInputWithWordVectors() throws IOException {
        Path vec = dir.resolve("vec.txt");
        Files.writeString(vec, "3 4\nsky 1 0 0 0\nis 0 1 0 0\nblue 0 0 1 0.5\n");
        var sd = RandomStateDicts.multiheadAttention(4, true, 3);
        Path m = model("mha4", sd, "{\"module\":\"MultiheadAttention\",\"embed_dim\":4,\"num_heads\":2}");
        Result r = ok(
                "run",
                "--model",
                m.toString(),
                "--text",
                "The sky is blue",
                "--vectors",
                vec.toString(),
                "--output",
                dir.resolve("t.npy").toString(),
                "--heatmap",
                dir.resolve("t.png").toString());
        assertTrue(r.err().contains("1 word(s) not in") && r.err().contains("the"), r.err());
        Tensor x =
                Tensor.of(new float[] {0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0.5f}, 1, 4, 4); // "the" -> zeros
        var want = RefAttention.multiheadAttention(sd, "", 4, 2, x, x, x, null, null, false, false, false, true);
        close(Npy.read(dir.resolve("t.npy")), want.output().reshape(4, 4), "text input output");
        assertTrue(Files.size(dir.resolve("t.png")) > 100);
        Result err = cli(
                "run", "--model", m.toString(), "--text", "The sky", "--vectors", vec.toString(), "--unknown", "error");
        assertEquals(Main.EXIT_BAD_INPUT, err.code(), err.err());
    }

    @Test
    void batchOfFilesSkipsBadOnesAndSummarises() throws IOException {
        var sd = RandomStateDicts.multiheadAttention(8, true, 1);
        Path m = model("mha", sd, "{\"module\":\"MultiheadAttention\",\"embed_dim\":8,\"num_heads\":2}");
        Path in = Files.createDirectories(dir.resolve("in"));
        Npy.write(in.resolve("a.npy"), RandomStateDicts.uniform(1, -1, 1, 3, 8));
        Npy.write(in.resolve("b.npy"), RandomStateDicts.uniform(2, -1, 1, 3, 5)); // wrong width
        Files.write(in.resolve("c.npy"), new byte[] {(byte) 0x93, 'N', 'U'}); // truncated
        Result r = cli(
                "run",
                "--model",
                m.toString(),
                "--input",
                in.toString(),
                "--output",
                dir.resolve("out").toString());
        assertEquals(Main.EXIT_BAD_INPUT, r.code());
        assertTrue(Files.exists(dir.resolve("out/a.npy")));
        assertFalse(Files.exists(dir.resolve("out/b.npy")));
        assertFalse(Files.exists(dir.resolve("out/c.npy")));
        assertTrue(r.err().contains("1 of 3 files done, 2 failed"), r.err());
    }

    @Test
    void badInputsFailWithOneLineAndLeaveNothing() throws IOException {
        var sd = RandomStateDicts.multiheadAttention(8, true, 1);
        String cfg = "{\"module\":\"MultiheadAttention\",\"embed_dim\":8,\"num_heads\":2}";
        Path good = model("good", sd, cfg);
        Path x = npy("x", RandomStateDicts.uniform(1, -1, 1, 3, 8));
        byte[] bytes = Files.readAllBytes(good);
        Path truncated = dir.resolve("trunc.safetensors");
        Files.write(truncated, Arrays.copyOf(bytes, bytes.length - 3));
        var missing = new java.util.LinkedHashMap<>(sd);
        missing.remove("out_proj.bias");
        Path missingModel = model("missing", missing, cfg);
        Path wrongHeads = model("heads", sd, "{\"module\":\"MultiheadAttention\",\"embed_dim\":8,\"num_heads\":3}");
        Tensor nan = RandomStateDicts.uniform(1, -1, 1, 3, 8);
        nan.data()[4] = Float.NaN;
        Path out = dir.resolve("never.npy");
        record Bad(String what, String expect, String... args) {}
        List<Bad> bads = List.of(
                new Bad(
                        "truncated model",
                        "trunc.safetensors",
                        "--model",
                        truncated.toString(),
                        "--input",
                        x.toString()),
                new Bad("missing tensor", "out_proj.bias", "--model", missingModel.toString(), "--input", x.toString()),
                new Bad(
                        "heads do not divide",
                        "not divisible",
                        "--model",
                        wrongHeads.toString(),
                        "--input",
                        x.toString()),
                new Bad(
                        "wrong width",
                        "model width is 8",
                        "--model",
                        good.toString(),
                        "--input",
                        npy("narrow", RandomStateDicts.uniform(1, -1, 1, 3, 5)).toString()),
                new Bad(
                        "no such input",
                        "nope.npy",
                        "--model",
                        good.toString(),
                        "--input",
                        dir.resolve("nope.npy").toString()),
                new Bad(
                        "NaN input",
                        "NaN",
                        "--model",
                        good.toString(),
                        "--input",
                        npy("nan", nan).toString()),
                new Bad(
                        "mask shape",
                        "kp.npy: key_padding_mask has shape (2, 3): expected (S) = (3)",
                        "--model",
                        good.toString(),
                        "--input",
                        x.toString(),
                        "--key-padding-mask",
                        npy("kp", Tensor.zeros(2, 3)).toString()));
        for (Bad b : bads) {
            List<String> args = new ArrayList<>(List.of("run"));
            args.addAll(List.of(b.args()));
            args.addAll(List.of("--output", out.toString()));
            Result r = cli(args.toArray(String[]::new));
            assertTrue(
                    r.code() == Main.EXIT_BAD_INPUT || r.code() == Main.EXIT_NON_FINITE,
                    b.what() + ": exit " + r.code());
            List<String> lines = Stream.of(r.err().split("\n"))
                    .filter(l -> !l.startsWith("attn: device"))
                    .toList();
            assertEquals(1, lines.size(), b.what() + ": one line expected, got:\n" + r.err());
            assertTrue(lines.get(0).contains(b.expect()), b.what() + ": " + lines.get(0));
            assertFalse(lines.get(0).contains("Exception"), b.what() + ": " + lines.get(0));
            assertFalse(Files.exists(out), b.what() + ": output written");
        }
        try (var s = Files.list(dir)) {
            assertTrue(s.noneMatch(p -> p.getFileName().toString().contains(".tmp")), "temp files left");
        }
    }

    @Test
    void inspectPrintsTablesAndJson() {
        var sd = RandomStateDicts.multiheadAttention(8, true, 1);
        Path m = model("mha", sd, "{\"module\":\"MultiheadAttention\",\"embed_dim\":8,\"num_heads\":2}");
        Result r = ok("inspect", m.toString());
        List<String> lines = r.out().lines().toList();
        assertEquals(m + ": safetensors, 4 tensors, 288 parameters, 1.1 KiB", lines.get(0));
        assertEquals("  name             dtype  shape    elements  bytes", lines.get(1));
        assertEquals("  in_proj_weight   F32    (24, 8)       192  768 B", lines.get(2));
        assertTrue(r.out().contains("config (from the metadata, as understood):"), r.out());
        assertTrue(r.out().contains("  num_heads    2"), r.out()); // every constructor argument, defaults filled in
        assertTrue(r.out().contains("  batch_first  true"), r.out());
        assertFalse(r.out().contains("ModelConfig["), r.out()); // no Java record dumps
        Map<?, ?> json = (Map<?, ?>)
                io.attn.io.Json.parse(ok("inspect", "--json", m.toString()).out());
        assertEquals("safetensors", json.get("format"));
        assertEquals(288L, json.get("parameters"));
        Map<?, ?> first = (Map<?, ?>) ((List<?>) json.get("tensors")).get(0);
        assertEquals(List.of(24L, 8L), first.get("shape"));
        assertEquals("F32", first.get("dtype"));
        assertEquals(768L, first.get("bytes"));
        assertEquals(2L, ((Map<?, ?>) json.get("config")).get("num_heads"));

        Result n = ok("inspect", npy("x", Tensor.zeros(2, 3)).toString());
        assertTrue(n.out().contains(".npy version 1.0, float32, shape (2, 3), 6 elements"), n.out());
        Result b = ok("inspect", "--json", boolNpy("mask", Tensor.zeros(4, 5)).toString());
        Map<?, ?> bj = (Map<?, ?>) io.attn.io.Json.parse(b.out());
        assertEquals("bool", bj.get("dtype"));
        assertEquals(List.of(4L, 5L), bj.get("shape"));
    }

    @Test
    void inspectNamesAModelFoldersFamilyAndSettings() {
        Path xlmr = Path.of("../tests/families/xlm-roberta");
        Result r = ok("inspect", xlmr.toString());
        List<String> lines = r.out().lines().toList();
        assertTrue(lines.get(0).startsWith(xlmr + ": Hugging Face model folder, model_type xlm-roberta, "), r.out());
        assertTrue(r.out().contains("  first_position_id "), r.out()); // RoBERTa's positions, past pad_token_id
        assertTrue(r.out().contains("  pooling "), r.out());
        Map<?, ?> json = (Map<?, ?>)
                io.attn.io.Json.parse(ok("inspect", "--json", xlmr.toString()).out());
        assertEquals("model folder", json.get("format"));
        assertEquals("xlm-roberta", json.get("model_type"));
        Map<?, ?> st = (Map<?, ?>) json.get("sentence_transformers");
        assertEquals("mean", st.get("pooling"));
        assertEquals(true, st.get("normalize"));
        assertEquals(32L, st.get("max_length"));
        assertEquals("query", st.get("default_prompt_name"));
        assertEquals("query: ", ((Map<?, ?>) st.get("prompts")).get("query"));
        assertEquals(2L, ((Map<?, ?>) json.get("config")).get("first_position_id"));

        // ModernBERT: the family, its alternating layers and the window it understood
        Map<?, ?> modern = (Map<?, ?>) io.attn.io.Json.parse(
                ok("inspect", "--json", "../tests/families/modernbert").out());
        assertEquals("modernbert", modern.get("model_type"));
        Map<?, ?> mc = (Map<?, ?>) modern.get("config");
        assertEquals(List.of("full_attention", "sliding_attention"), mc.get("layer_types"));
        assertEquals("|i - j| <= 4", mc.get("sliding_window"));
        assertEquals(10000.0, mc.get("local_rope_theta"));
        assertEquals(160000.0, mc.get("rope_theta"));

        // MPNet: its relative position bias (the fixture's config: 32 buckets)
        Map<?, ?> mpnet = (Map<?, ?>) io.attn.io.Json.parse(
                ok("inspect", "--json", "../tests/families/mpnet").out());
        assertEquals(
                "32 buckets (T5's, max distance 128), shared by the layers",
                ((Map<?, ?>) mpnet.get("config")).get("relative_attention_bias"));

        // JinaBERT (a bert with position_embedding_type alibi): ALiBi in place of the position table
        Map<?, ?> jina = (Map<?, ?>) io.attn.io.Json.parse(
                ok("inspect", "--json", "../tests/families/jina-bert").out());
        assertEquals(
                "alibi: -slope_h |j - i| added to the scores (no position table)",
                ((Map<?, ?>) jina.get("config")).get("positions"));

        // Gemma 3 (EmbeddingGemma's shape): bidirectional, its symmetric window, its own score scale, local rope
        Map<?, ?> gemma = (Map<?, ?>) ((Map<?, ?>) io.attn.io.Json.parse(
                        ok("inspect", "--json", "../tests/families/gemma3").out()))
                .get("config");
        assertEquals("|i - j| <= 5 in layers [0, 2]", gemma.get("sliding_window"));
        assertEquals(10000.0, gemma.get("local_rope_theta"));
        assertEquals(Double.parseDouble(Float.toString((float) (1 / Math.sqrt(24)))), gemma.get("attention_scale"));
        assertTrue(((String) gemma.get("architecture")).contains("bidirectional attention"), gemma.toString());

        // Mistral: its sliding window, understood
        Map<?, ?> mistral = (Map<?, ?>) io.attn.io.Json.parse(
                ok("inspect", "--json", "../tests/families/mistral").out());
        assertEquals("causal, i - 16 < j <= i", ((Map<?, ?>) mistral.get("config")).get("sliding_window"));

        // a decoder embedder: grouped-query attention, q/k norms, last-token pooling
        Path qwen3 = Path.of("../tests/families/qwen3");
        Result q = ok("inspect", qwen3.toString());
        assertTrue(
                q.out().lines().toList().get(0).startsWith(qwen3 + ": Hugging Face model folder, model_type qwen3, "),
                q.out());
        Map<?, ?> qj = (Map<?, ?>)
                io.attn.io.Json.parse(ok("inspect", "--json", qwen3.toString()).out());
        Map<?, ?> qc = (Map<?, ?>) qj.get("config");
        assertEquals(2L, qc.get("num_key_value_heads"));
        assertEquals(16L, qc.get("head_dim"));
        assertEquals("grouped-query (2 query heads per key/value head)", qc.get("attention"));
        assertEquals(true, qc.get("qk_norm"));
        assertEquals("lasttoken", ((Map<?, ?>) qj.get("sentence_transformers")).get("pooling"));
    }
}
