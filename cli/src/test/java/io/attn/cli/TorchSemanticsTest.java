package io.attn.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.attn.io.Npy;
import io.attn.io.SafeTensors;
import io.attn.reference.layers.DTensor;
import io.attn.reference.layers.LayerConfig;
import io.attn.reference.layers.Mask;
import io.attn.reference.layers.RandomStateDicts;
import io.attn.reference.layers.RefAttention;
import io.attn.reference.layers.RefTransformer;
import io.attn.reference.layers.TransformerConfig;
import io.attn.tensor.Tensor;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code attn run} with PyTorch's forward arguments and layouts, against the double reference (written from PyTorch's
 * semantics): {@code "batch_first": false} takes and returns {@code (L, B, E)}; every mask of the forward has an
 * option, read as PyTorch reads the tensor (bool: true = not allowed to attend; float: added to the scores, a float
 * key-padding mask included); a mask the module's forward does not take, or of another dtype, is refused.
 */
class TorchSemanticsTest {
    @TempDir
    Path dir;

    static final int E = 8, H = 2;

    Path model(String name, Map<String, Tensor> sd, String config) {
        Path p = dir.resolve(name + ".safetensors");
        SafeTensors.write(p, sd, Map.of("config", config));
        return p;
    }

    Path npy(String name, Tensor t) {
        Path p = dir.resolve(name + ".npy");
        Npy.write(p, t);
        return p;
    }

    Path bool(String name, Tensor t) {
        return RunCommandTest.typedNpy(dir.resolve(name + ".npy"), t, "|b1");
    }

    static Tensor rand(long seed, int... dims) {
        return RandomStateDicts.uniform(seed, -1, 1, dims);
    }

    /** (P, Q, E) -> (Q, P, E). */
    static Tensor t01(Tensor t) {
        int p = t.dim(0), q = t.dim(1), e = t.dim(2);
        Tensor o = Tensor.zeros(q, p, e);
        for (int i = 0; i < p; i++)
            for (int j = 0; j < q; j++) System.arraycopy(t.data(), (i * q + j) * e, o.data(), (j * p + i) * e, e);
        return o;
    }

    static DTensor t01(DTensor t) {
        return DTensor.of(t01(t.toTensor()));
    }

    Tensor run(String... args) {
        List<String> a = new ArrayList<>(List.of("run"));
        a.addAll(List.of(args));
        Path out = dir.resolve("out" + a.hashCode() + ".npy");
        a.addAll(List.of("--output", out.toString()));
        RunCommandTest.Result r = RunCommandTest.cli(a.toArray(String[]::new));
        assertEquals(0, r.code(), r.err());
        return Npy.read(out);
    }

    @Test
    void batchFirstFalseTakesAndReturnsSequenceFirst() {
        LayerConfig c = LayerConfig.of(E, H, 16);
        var sd = RandomStateDicts.encoderLayer(c, 1);
        Path m = model(
                "enc",
                sd,
                "{\"module\":\"TransformerEncoderLayer\",\"d_model\":8,\"nhead\":2,\"dim_feedforward\":16,"
                        + "\"batch_first\":false}");
        Tensor x = rand(2, 3, 5, E); // (B, L, E)
        Tensor kp = Tensor.zeros(3, 5);
        kp.set(1f, 2, 4);
        Tensor y = run(
                "--model",
                m.toString(),
                "--input",
                npy("x", t01(x)).toString(),
                "--key-padding-mask",
                bool("kp", kp).toString());
        var want = RefTransformer.encoderLayer(sd, "", c, x, null, Mask.bool(kp), false);
        assertEquals(io.attn.tensor.Shape.of(5, 3, E), y.shape()); // (L, B, E) out, as PyTorch
        RunCommandTest.close(y, t01(want.output()), "batch_first=false output");

        // the same file read batch-first (as before this fix) is a different computation
        Tensor wrong = run(
                "--model",
                model(
                                "enc_bf",
                                sd,
                                "{\"module\":\"TransformerEncoderLayer\",\"d_model\":8,"
                                        + "\"nhead\":2,\"dim_feedforward\":16}")
                        .toString(),
                "--input",
                dir.resolve("x.npy").toString());
        assertTrue(RunCommandTest.relErr(wrong, t01(want.output())) > 0.1);
    }

    @Test
    void everyMaskOfTheForwardHasAnOptionWithPyTorchsMeaning() {
        // MultiheadAttention: bool attn_mask (L, S), float key_padding_mask (B, S) added to the scores
        var msd = RandomStateDicts.multiheadAttention(E, true, 3);
        Path mha = model("mha", msd, "{\"module\":\"MultiheadAttention\",\"embed_dim\":8,\"num_heads\":2}");
        Tensor q = rand(4, 2, 4, E), mem = rand(5, 2, 6, E);
        Tensor am = Tensor.zeros(4, 6);
        am.set(1f, 1, 3);
        am.set(1f, 2, 0);
        Tensor fkp = rand(6, 2, 6);
        Tensor y = run(
                "--model",
                mha.toString(),
                "--input",
                npy("q", q).toString(),
                "--memory",
                npy("mem", mem).toString(),
                "--attn-mask",
                bool("am", am).toString(),
                "--key-padding-mask",
                npy("fkp", fkp).toString());
        var want = RefAttention.multiheadAttention(
                msd,
                "",
                E,
                H,
                DTensor.of(q),
                DTensor.of(mem),
                DTensor.of(mem),
                fkp,
                false,
                am,
                true,
                false,
                false,
                true);
        RunCommandTest.close(y, want.output(), "MHA attn_mask + float key_padding_mask");

        // a decoder layer: every decoder mask, bool and float, and both causal flags
        LayerConfig c = LayerConfig.of(E, H, 16);
        var dsd = RandomStateDicts.decoderLayer(c, 7);
        Path dec = model(
                "dec",
                dsd,
                "{\"module\":\"TransformerDecoderLayer\",\"d_model\":8,\"nhead\":2," + "\"dim_feedforward\":16}");
        Tensor tgt = rand(8, 2, 4, E), memory = rand(9, 2, 5, E);
        Tensor tgtMask = rand(10, 4, 4), memMask = Tensor.zeros(2 * H, 4, 5), tkp = Tensor.zeros(2, 4);
        memMask.set(1f, 3, 1, 0);
        tkp.set(1f, 1, 3);
        Tensor mkp = rand(11, 2, 5);
        Tensor yd = run(
                "--model",
                dec.toString(),
                "--input",
                npy("tgt", tgt).toString(),
                "--memory",
                npy("memory", memory).toString(),
                "--tgt-mask",
                npy("tm", tgtMask).toString(),
                "--memory-mask",
                bool("mm", memMask).toString(),
                "--tgt-key-padding-mask",
                bool("tkp", tkp).toString(),
                "--memory-key-padding-mask",
                npy("mkp", mkp).toString(),
                "--causal",
                "--memory-causal");
        var wd = RefTransformer.decoderLayer(
                dsd,
                "",
                c,
                DTensor.of(tgt),
                DTensor.of(memory),
                Mask.additive(tgtMask),
                Mask.bool(memMask),
                Mask.bool(tkp),
                Mask.additive(mkp),
                true,
                true);
        RunCommandTest.close(yd, wd.output(), "decoder layer, every mask");

        // Transformer: src_mask (--attn-mask), src/tgt/memory key padding
        TransformerConfig tc = new TransformerConfig(1, 1, c);
        var tsd = RandomStateDicts.transformer(tc, 12);
        Path t = model(
                "t",
                tsd,
                "{\"module\":\"Transformer\",\"d_model\":8,\"nhead\":2,\"num_encoder_layers\":1,"
                        + "\"num_decoder_layers\":1,\"dim_feedforward\":16}");
        Tensor src = rand(13, 2, 6, E), tt = rand(14, 2, 3, E), srcMask = rand(15, 6, 6);
        Tensor skp = Tensor.zeros(2, 6), ttkp = Tensor.zeros(2, 3);
        skp.set(1f, 0, 5);
        ttkp.set(1f, 1, 2);
        Tensor yt = run(
                "--model",
                t.toString(),
                "--input",
                npy("src", src).toString(),
                "--target",
                npy("tt", tt).toString(),
                "--attn-mask",
                npy("sm", srcMask).toString(),
                "--key-padding-mask",
                bool("skp", skp).toString(),
                "--tgt-key-padding-mask",
                bool("ttkp", ttkp).toString(),
                "--memory-key-padding-mask",
                bool("mkp2", skp).toString(),
                "--causal");
        var wt = RefTransformer.transformer(
                tsd,
                tc,
                src,
                tt,
                Mask.additive(srcMask),
                null,
                null,
                false,
                true,
                Mask.bool(skp),
                Mask.bool(ttkp),
                Mask.bool(skp));
        RunCommandTest.close(yt, wt.output(), "Transformer, src_mask and every padding");
    }

    @Test
    void aFloatKeyPaddingMaskIsAddedAsPyTorchDoesNotReadAsBool() {
        var sd = RandomStateDicts.multiheadAttention(E, true, 20);
        Path m = model("mha", sd, "{\"module\":\"MultiheadAttention\",\"embed_dim\":8,\"num_heads\":2}");
        Tensor x = rand(21, 2, 5, E);
        Tensor kp = Tensor.zeros(2, 5);
        kp.set(1f, 0, 4);
        kp.set(1f, 1, 3);
        String xs = npy("x", x).toString();
        Tensor asFloat = run(
                "--model",
                m.toString(),
                "--input",
                xs,
                "--key-padding-mask",
                npy("f", kp).toString());
        Tensor asBool = run(
                "--model",
                m.toString(),
                "--input",
                xs,
                "--key-padding-mask",
                bool("b", kp).toString());
        var added = RefAttention.multiheadAttention(
                sd, "", E, H, DTensor.of(x), DTensor.of(x), DTensor.of(x), kp, false, null, false, false, false, true);
        var masked = RefAttention.multiheadAttention(sd, "", E, H, x, x, x, kp, null, false, false, false, true);
        RunCommandTest.close(asFloat, added.output(), "float 0/1 mask: 1 added to the scores");
        RunCommandTest.close(asBool, masked.output(), "bool mask: masked out");
        assertTrue(RunCommandTest.relErr(asFloat, masked.output()) > 1e-3, "the float mask must not act as bool");
    }

    @Test
    void masksTheForwardDoesNotTakeOrOfAnotherDtypeAreRefused() {
        var dsd = RandomStateDicts.decoderLayer(LayerConfig.of(E, H, 16), 30);
        Path dec = model(
                "dec",
                dsd,
                "{\"module\":\"TransformerDecoderLayer\",\"d_model\":8,\"nhead\":2," + "\"dim_feedforward\":16}");
        String tgt = npy("tgt", rand(31, 2, 4, E)).toString(),
                mem = npy("mem", rand(32, 2, 5, E)).toString();
        Path kp = bool("kp", Tensor.zeros(2, 5));
        var r = RunCommandTest.cli(
                "run", "--model", dec.toString(), "--input", tgt, "--memory", mem, "--key-padding-mask", kp.toString());
        ExitCodesTest.oneLine(
                r,
                3,
                kp + ": key_padding_mask is not an argument of TransformerDecoderLayer's forward (its masks are"
                        + " [tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask])");
        Path ints = RunCommandTest.typedNpy(dir.resolve("ints.npy"), Tensor.zeros(2, 5), "<i8");
        r = RunCommandTest.cli(
                "run",
                "--model",
                dec.toString(),
                "--input",
                tgt,
                "--memory",
                mem,
                "--memory-key-padding-mask",
                ints.toString());
        ExitCodesTest.oneLine(r, 3, ints + ": a mask of int64: PyTorch takes bool masks");
        var sd = RandomStateDicts.multiheadAttention(E, true, 33);
        Path mha = model("mha", sd, "{\"module\":\"MultiheadAttention\",\"embed_dim\":8,\"num_heads\":2}");
        r = RunCommandTest.cli("run", "--model", mha.toString(), "--input", tgt, "--memory-causal");
        ExitCodesTest.oneLine(r, 3, "memory_is_causal is not an argument of MultiheadAttention's forward");
    }
}
