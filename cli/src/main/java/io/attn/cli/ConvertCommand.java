package io.attn.cli;

import io.attn.text.Pooling;
import io.attn.text.TextModel;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code attn convert}: a BERT-family {@code .onnx} export (the form Java libraries such as langchain4j ship) to a
 * Hugging Face model folder that {@code attn embed}, the library and the Hugging Face libraries load; an int8
 * ({@code -q}) export keeps its int8 weights in {@code attn quantize}'s format, which attn loads.
 */
@Command(
        name = "convert",
        description = {
            "Convert a BERT-family .onnx export and its tokenizer.json to a Hugging Face model folder.",
            "An int8 export (ONNX Runtime's dynamic quantization, the -q models) keeps its int8 weights, scales and"
                    + " zero points, with the quantization_config of attn quantize's format: attn runs the folder as"
                    + " it runs the file."
        })
final class ConvertCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "MODEL.onnx", description = "The ONNX export.")
    Path onnx;

    @Option(
            names = "--tokenizer",
            paramLabel = "FILE",
            description = "Its tokenizer.json (default: tokenizer.json or <name>-tokenizer.json beside the model).")
    Path tokenizer;

    @Option(names = "--out", required = true, paramLabel = "DIR", description = "The folder to write (new or empty).")
    Path out;

    @Option(
            names = "--pooling",
            paramLabel = "mean|cls|max",
            description = "The sentence pooling to record (default: ${DEFAULT-VALUE}; bge models use cls).")
    String pooling = "mean";

    @Option(names = "--normalize", description = "Record a Normalize module (unit-length vectors).")
    boolean normalize;

    @Option(names = "--verbose", description = "Stack traces for errors.")
    boolean verbose;

    @Override
    public Integer call() {
        Pooling p = OptionValues.pooling(new picocli.CommandLine(this), "--pooling", pooling);
        TextModel m = TextModel.read(onnx, tokenizer);
        m.writeFolder(out, p, normalize);
        int int8 = m.int8Tensors().size();
        System.out.println("attn: wrote " + out + ": " + m.weights().size() + " tensors"
                + (int8 > 0 ? " (" + int8 + " int8)" : "") + ", hidden " + m.hiddenSize()
                + ", " + p.label() + " pooling" + (normalize ? ", normalized" : "") + ", max " + m.maxLength()
                + " tokens");
        return 0;
    }
}
