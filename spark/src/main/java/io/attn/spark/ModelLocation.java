package io.attn.spark;

import io.attn.AttnException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.spark.SparkEnv;
import org.apache.spark.SparkFiles;

/**
 * Where a model is on this node. A model path is a local path ({@code /models/minilm}, {@code file:/models/minilm}) or
 * the name of a file or archive shipped with the job ({@code --files}, {@code --archives model.zip#minilm},
 * {@code spark.files}, {@code spark.archives}). It is taken as given when it exists on the node, else as the shipped
 * file of the same name ({@link SparkFiles#get}), else it is missing: one line naming the path and the node.
 *
 * <p>Stateless and thread-safe.
 */
final class ModelLocation {
    private ModelLocation() {}

    /** The model's path on this node (driver or executor). */
    static Path resolve(String modelPath) {
        Path p = localPath(modelPath);
        if (Files.exists(p)) return p;
        Path shipped = shipped(p);
        if (shipped != null) return shipped;
        throw AttnException.badInput("model " + modelPath + " not found on " + node()
                + " (give a path every node sees, or ship the model with --files or --archives and give its name)");
    }

    /** The model path as a local path: a plain path, or a {@code file:} URI; other schemes are refused. */
    static Path localPath(String modelPath) {
        if (modelPath == null || modelPath.isBlank()) throw AttnException.badInput("modelPath is not set");
        String s = modelPath.trim();
        int colon = s.indexOf(':');
        if (colon > 1 && s.substring(0, colon).matches("[A-Za-z][A-Za-z0-9+.-]*")) {
            if (!s.regionMatches(true, 0, "file:", 0, 5))
                throw AttnException.badInput("model " + s + ": attn reads models from the local file system; ship it"
                        + " with --archives " + s + "#model (or --files) and give the name, e.g. modelPath=model");
            try {
                return Path.of(URI.create(s));
            } catch (IllegalArgumentException | java.nio.file.FileSystemNotFoundException e) {
                throw AttnException.badInput("model " + s + ": not a file URI (" + e.getMessage() + ")");
            }
        }
        return Path.of(s);
    }

    private static Path shipped(Path p) {
        if (SparkEnv.get() == null || p.getFileName() == null) return null;
        Path f = Path.of(SparkFiles.get(p.getFileName().toString()));
        return Files.exists(f) ? f : null;
    }

    /** {@code the driver} or {@code executor N (host)}. */
    static String node() {
        SparkEnv env = SparkEnv.get();
        if (env == null) return "this JVM (no Spark context)";
        String id = env.executorId();
        String host = env.blockManager() == null
                ? "?"
                : env.blockManager().blockManagerId().host();
        return "driver".equals(id) ? "the driver (" + host + ")" : "executor " + id + " (" + host + ")";
    }
}
