package io.attn.nn;

import io.attn.AttnException;
import io.attn.io.Json;
import io.attn.io.SafeTensors;
import java.nio.file.Path;
import java.util.Map;

/**
 * Where an exported model's config comes from: a JSON file given beside the weights, else the {@code "config"} entry
 * of the safetensors metadata (as {@code tools/export_torch.py} writes it). One reader for every module kind ({@link
 * Model}, {@link DecoderOnlyLM}).
 */
public final class ConfigFiles {
    private ConfigFiles() {}

    /** A config as read, and the source that names it in error messages. */
    public record Read(Map<String, Object> json, String source) {}

    /**
     * The config of the model file {@code weights} (already read as {@code f}): {@code config} (JSON) when not null,
     * else the metadata's {@code "config"} entry.
     *
     * @throws AttnException BAD_INPUT naming the file when there is none or it is not a JSON object
     */
    public static Read read(SafeTensors.File f, Path weights, Path config) {
        if (config != null) return new Read(Json.readObject(config), config.toString());
        String source = weights + " (metadata \"config\")";
        String text = f.metadata().get("config");
        if (text == null)
            throw AttnException.badInput(
                    weights + ": no config given and the safetensors metadata has no \"config\" entry");
        return new Read(Json.parseObject(text, source), source);
    }
}
