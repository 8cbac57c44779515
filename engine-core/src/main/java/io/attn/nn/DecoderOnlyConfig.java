package io.attn.nn;

import io.attn.AttnException;
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
            "dropout");

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
        for (String k : m.keySet())
            if (!KEYS.contains(k))
                throw AttnException.badInput(source + ": unknown config key \"" + k + "\" for " + MODULE);
        try {
            String positional = str(m, "positional", "sinusoidal");
            if (!positional.equals("sinusoidal") && !positional.equals("learned"))
                throw AttnException.badInput(
                        "positional must be \"sinusoidal\" or \"learned\", got \"" + positional + "\"");
            LayerConfig layer = new LayerConfig(
                    integer(m, "d_model", 512),
                    integer(m, "nhead", 8),
                    integer(m, "dim_feedforward", 2048),
                    str(m, "activation", "relu"),
                    (float) number(m, "layer_norm_eps", 1e-5),
                    bool(m, "norm_first", false),
                    bool(m, "bias", true));
            return new DecoderOnlyConfig(
                    integer(m, "vocab_size", -1),
                    layer,
                    integer(m, "num_layers", 6),
                    integer(m, "max_len", 1024),
                    positional.equals("learned"),
                    bool(m, "tied_embeddings", false),
                    bool(m, "final_norm", true));
        } catch (AttnException e) {
            throw new AttnException(e.code(), source + ": " + e.getMessage());
        }
    }

    private static int integer(Map<String, Object> m, String key, int dflt) {
        Object v = m.get(key);
        if (v == null) return dflt;
        if (v instanceof Number n && n.doubleValue() == Math.rint(n.doubleValue()) && Math.abs(n.doubleValue()) < 1e9)
            return n.intValue();
        throw AttnException.badInput("config key \"" + key + "\" must be an integer, got " + v);
    }

    private static double number(Map<String, Object> m, String key, double dflt) {
        Object v = m.get(key);
        if (v == null) return dflt;
        if (v instanceof Number n) return n.doubleValue();
        throw AttnException.badInput("config key \"" + key + "\" must be a number, got " + v);
    }

    private static boolean bool(Map<String, Object> m, String key, boolean dflt) {
        Object v = m.get(key);
        if (v == null) return dflt;
        if (v instanceof Boolean b) return b;
        throw AttnException.badInput("config key \"" + key + "\" must be true or false, got " + v);
    }

    private static String str(Map<String, Object> m, String key, String dflt) {
        Object v = m.get(key);
        if (v == null) return dflt;
        if (v instanceof String s) return s;
        throw AttnException.badInput("config key \"" + key + "\" must be a string, got " + v);
    }
}
