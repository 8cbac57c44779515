package io.attn.nn;

import io.attn.AttnException;
import io.attn.io.JsonFields;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The configuration of a {@link DecoderOnlyLM}, as read from a config JSON or the {@code config} entry of a safetensors
 * file's metadata:
 *
 * <pre>
 * {"module":"DecoderOnlyLM","vocab_size":1000,"d_model":512,"nhead":8,"num_layers":6,"dim_feedforward":2048,
 *  "max_len":1024,"positional":"sinusoidal","norm_first":true,"activation":"gelu","tied_embeddings":true,
 *  "final_norm":true,"layer_norm_eps":1e-5,"bias":true}
 * </pre>
 *
 * {@code positional} is {@code "sinusoidal"} (the fixed encoding of "Attention Is All You Need", no weights) or {@code
 * "learned"} (a {@code pos.weight (max_len, d_model)} table). Missing keys take the defaults shown by {@link #parse};
 * unknown keys are an error.
 */
public record DecoderOnlyConfig(
        int vocabSize,
        LayerConfig layer,
        int numLayers,
        int maxLen,
        boolean learnedPositions,
        boolean tiedEmbeddings,
        boolean finalNorm) {
    public static final String MODULE = "DecoderOnlyLM";

    private static final Set<String> KEYS = Set.of(
            "module",
            "vocab_size",
            "d_model",
            "nhead",
            "num_layers",
            "dim_feedforward",
            "max_len",
            "positional",
            "norm_first",
            "activation",
            "tied_embeddings",
            "final_norm",
            "layer_norm_eps",
            "bias",
            "dropout",
            "quantization_config"); // attn quantize's block, checked by the API layer's Quantization.check

    public DecoderOnlyConfig {
        if (vocabSize <= 0) throw AttnException.badInput("vocab_size must be positive, got " + vocabSize);
        if (numLayers <= 0) throw AttnException.badInput("num_layers must be positive, got " + numLayers);
        if (maxLen <= 0) throw AttnException.badInput("max_len must be positive, got " + maxLen);
    }

    /** The config as the engine understands it: {@code "module"} and every key, defaults filled in. */
    public Map<String, Object> arguments() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("module", MODULE);
        m.put("vocab_size", vocabSize);
        layer.putArguments(m);
        m.put("num_layers", numLayers);
        m.put("max_len", maxLen);
        m.put("positional", learnedPositions ? "learned" : "sinusoidal");
        m.put("tied_embeddings", tiedEmbeddings);
        m.put("final_norm", finalNorm);
        return m;
    }

    /** Parses a config map; {@code source} names the file in error messages. */
    public static DecoderOnlyConfig parse(Map<String, Object> m, String source) {
        if (!MODULE.equals(m.get("module")))
            throw AttnException.badInput(
                    source + ": config \"module\" must be \"" + MODULE + "\", got " + m.get("module"));
        JsonFields f = new JsonFields(m, source).allow(KEYS);
        f.checkNoUnknown(MODULE);
        String positional = f.string("positional", "sinusoidal");
        int dModel = f.integer("d_model", 512), nhead = f.integer("nhead", 8), ff = f.integer("dim_feedforward", 2048);
        String activation = f.string("activation", "relu");
        float eps = (float) f.number("layer_norm_eps", 1e-5);
        boolean normFirst = f.bool("norm_first", false), bias = f.bool("bias", true);
        int vocab = f.integer("vocab_size", -1),
                layers = f.integer("num_layers", 6),
                maxLen = f.integer("max_len", 1024);
        boolean tied = f.bool("tied_embeddings", false), finalNorm = f.bool("final_norm", true);
        try {
            if (!positional.equals("sinusoidal") && !positional.equals("learned"))
                throw AttnException.badInput(
                        "positional must be \"sinusoidal\" or \"learned\", got \"" + positional + "\"");
            LayerConfig layer = new LayerConfig(dModel, nhead, ff, activation, eps, normFirst, bias);
            return new DecoderOnlyConfig(vocab, layer, layers, maxLen, positional.equals("learned"), tied, finalNorm);
        } catch (AttnException e) {
            throw new AttnException(e.code(), source + ": " + e.getMessage());
        }
    }
}
