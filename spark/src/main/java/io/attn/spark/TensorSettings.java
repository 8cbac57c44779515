package io.attn.spark;

import io.attn.AttnException;
import java.io.Serializable;

/**
 * What a task needs to get its tensor model (an encoder or attention module exported from PyTorch, as {@code attn run}
 * serves it) from the executor's {@link ExecutorModels}. Two tasks with equal settings share one loaded model.
 *
 * @param modelPath the {@code .safetensors} file (local, or shipped by name: see {@link ModelLocation})
 * @param configPath the JSON config when it is not in the file's metadata; null: from the metadata
 * @param batchSize the most sequences in one forward pass
 * @param engine the device and CPU threads
 *     <p>Immutable and thread-safe.
 */
public record TensorSettings(String modelPath, String configPath, int batchSize, EngineSettings engine)
        implements Serializable {
    public TensorSettings {
        if (modelPath == null || modelPath.isBlank()) throw AttnException.badInput("modelPath is not set");
        if (configPath != null && configPath.isBlank()) configPath = null;
        if (batchSize <= 0) throw AttnException.badInput("batch size must be positive, got " + batchSize);
        if (engine == null) throw AttnException.badInput("engine settings are required");
    }
}
