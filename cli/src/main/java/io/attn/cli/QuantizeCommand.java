package io.attn.cli;

import io.attn.AttnException;
import io.attn.engine.Quantization;
import io.attn.tensor.DType;
import io.attn.text.TextModel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code attn quantize}: a Hugging Face text-encoder folder to a copy whose weights are int8 (ONNX Runtime's dynamic
 * quantization, {@link Quantization}) or half precision ({@code --dtype float16|bfloat16}), which {@code attn embed},
 * the library and the server load like any folder.
 */
@Command(
        name = "quantize",
        description = {
            "Write a copy of a Hugging Face model folder with int8 weights (as ONNX Runtime's quantize_dynamic:"
                    + " int8 symmetric projections, uint8 embedding tables, activations quantized per sequence when"
                    + " run) or half-precision ones (--dtype)."
        })
final class QuantizeCommand implements Callable<Integer> {
    @Parameters(
            index = "0",
            paramLabel = "DIR",
            description = "The model folder (config.json, model.safetensors; or the folder of a BERT .onnx export,"
                    + " written as attn convert writes one), or attn generate's M.safetensors.")
    Path dir;

    @Option(
            names = "--out",
            required = true,
            paramLabel = "DIR",
            description = "The folder to write (new or empty); for a language model, the new .safetensors file.")
    Path out;

    @Option(
            names = "--per-channel",
            description = "One int8 scale per output of each projection (default: one per tensor).")
    boolean perChannel;

    @Option(
            names = "--reduce-range",
            description = "7-bit weights ([-64, 64]), ONNX Runtime's reduce_range (default: [-127, 127]).")
    boolean reduceRange;

    @Option(
            names = "--dtype",
            paramLabel = "int8|float16|bfloat16",
            description = "The weights' type (default: ${DEFAULT-VALUE}); float16 and bfloat16 write every float"
                    + " tensor in half precision, which attn widens to float32 once when it loads them.")
    String dtype = "int8";

    @Option(
            names = "--config",
            paramLabel = "C.json",
            description = "A language model's config (default: the safetensors metadata's \"config\").")
    Path config;

    @Option(
            names = "--task",
            paramLabel = "NAME",
            description = "A task LoRA model's (jina-embeddings-v3's) task adapter to merge before quantizing; the"
                    + " folder written is that task's model (config.json names it as attn_task).")
    String task;

    @Option(names = "--verbose", description = "Stack traces for errors.")
    boolean verbose;

    @Override
    public Integer call() {
        DType floats =
                switch (dtype) {
                    case "int8" -> DType.F32;
                    case "float16" -> DType.F16;
                    case "bfloat16" -> DType.BF16;
                    default ->
                        throw OptionValues.usage(
                                new picocli.CommandLine(this),
                                "--dtype " + dtype + ": expected int8, float16 or bfloat16");
                };
        if (floats != DType.F32 && (perChannel || reduceRange))
            throw OptionValues.usage(
                    new picocli.CommandLine(this), "--per-channel and --reduce-range apply to --dtype int8 only");
        if (Files.isRegularFile(dir) && dir.getFileName().toString().endsWith(".safetensors"))
            return languageModel(floats);
        if (config != null)
            throw AttnException.badInput("--config applies to a language model's .safetensors file; a model folder"
                    + " has its config.json");
        if (!Files.isDirectory(dir))
            throw AttnException.badInput(dir + ": not a model folder (attn quantize reads a Hugging Face folder or"
                    + " attn generate's M.safetensors; an .onnx export is made a folder by attn convert)");
        TextModel m = TextModel.read(dir, null, task);
        if (!m.tasks().isEmpty())
            // its adapters stay float and per task: a copy is one task's model (or the base's, said so)
            throw AttnException.badInput(dir + ": a task LoRA model (tasks " + m.tasks() + "): quantize one task's"
                    + " model with --task NAME (its adapter merged first)");
        if (m.fromOnnx()
                && (!m.dense().isEmpty()
                        || !m.prompts().byName().isEmpty()
                        || !m.prompts().includePrompt()
                        || m.activation() != null))
            // the folder attn convert writes holds the transformer, Pooling and Normalize only: a copy without the
            // rest would embed differently
            throw AttnException.badInput(dir + ": an .onnx export with sentence-transformers settings that attn convert"
                    + " does not write (Dense modules, prompts or an activation): quantize a Hugging Face folder of"
                    + " the model instead");
        if (floats == DType.F32) m = m.quantized(new Quantization.Options(perChannel, reduceRange));
        // the folder of an .onnx export holds no Hugging Face files to copy: written as attn convert writes one (its
        // tokenizer as tokenizer.json, the sentence-transformers files for the pooling attn runs it with)
        if (m.fromOnnx()) m.writeFolder(out, m.pooling(), m.normalize(), floats);
        else m.writeFolderFrom(dir, out, floats);
        System.out.println("attn: wrote " + out + ": "
                + (floats == DType.F32
                        ? m.int8Tensors().size() + " int8 tensors (" + (perChannel ? "per channel" : "per tensor")
                                + (reduceRange ? ", reduced range" : "") + "), the rest float32"
                        : "float tensors as " + dtype));
        return 0;
    }

    /** {@code attn generate}'s language model file to one new safetensors file. */
    private Integer languageModel(DType floats) {
        String what = Quantization.writeLanguageModel(
                dir, config, out, new Quantization.Options(perChannel, reduceRange), floats);
        System.out.println("attn: wrote " + out + ": " + what);
        return 0;
    }
}
