package io.attn.engine;

import io.attn.nn.DecoderOnlyConfig;
import io.attn.nn.ModelConfig;
import java.util.Map;

/**
 * Model configs as the engine reads them, without loading weights: for tools that show or check a config ({@code
 * attn inspect}). A config is the JSON object of a model file's {@code "config"} metadata entry or of its config file:
 * the module ({@code MultiheadAttention}, {@code TransformerEncoder}, {@code BertModel}, {@code DecoderOnlyLM}, ...)
 * and its constructor arguments under PyTorch's names.
 */
public final class ModelConfigs {
    private ModelConfigs() {}

    /**
     * The config with every argument the engine uses, defaults filled in as PyTorch fills them.
     *
     * @param source names the config in error messages (the file it came from)
     * @throws io.attn.AttnException BAD_INPUT naming the source and the field when the engine cannot read it
     */
    public static Map<String, Object> withDefaults(Map<String, Object> config, String source) {
        return DecoderOnlyConfig.MODULE.equals(config.get("module"))
                ? DecoderOnlyConfig.parse(config, source).arguments()
                : ModelConfig.parse(config, source).arguments();
    }
}
