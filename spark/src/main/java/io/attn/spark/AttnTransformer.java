package io.attn.spark;

import io.attn.AttnException;
import java.util.List;
import org.apache.spark.ml.Transformer;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.param.ParamValidators;
import org.apache.spark.ml.util.DefaultParamsWritable;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import scala.Option;

/**
 * What the attn transformers share: the columns, the model path and where the model runs ({@code device}, {@code
 * threads}). Params are Spark ML params: set with the setters or a {@link ParamMap}, saved and loaded with {@link
 * DefaultParamsWritable} (the model path is saved, not the model).
 *
 * <p>Like every Spark ML stage, an instance is configured on the driver and not meant to be changed while a job runs;
 * {@code transform} only reads its params.
 *
 * @param <T> the concrete transformer (setters return it)
 */
public abstract class AttnTransformer<T extends AttnTransformer<T>> extends Transformer
        implements DefaultParamsWritable {
    private final String uid;
    private final Param<String> inputCol, outputCol, modelPath, device;
    private final IntParam threads;

    protected AttnTransformer(String uid, String defaultInputCol, String defaultOutputCol) {
        this.uid = uid;
        inputCol = new Param<>(this, "inputCol", "the input column");
        outputCol = new Param<>(this, "outputCol", "the output column (added)");
        modelPath = new Param<>(
                this,
                "modelPath",
                "the model: a local path every node sees, or the name of a file or archive shipped with the job");
        device = new Param<>(
                this,
                "device",
                "auto (the task's GPU when Spark assigned one and CUDA can use it, else the CPU), cpu or cuda",
                ParamValidators.inArray(List.copyOf(EngineSettings.DEVICES)));
        threads = new IntParam(
                this,
                "threads",
                "CPU threads of the executor's engine, shared by its tasks (0: spark.executor.cores, else every"
                        + " processor)",
                ParamValidators.gtEq(0));
        setDefault(inputCol, defaultInputCol);
        setDefault(outputCol, defaultOutputCol);
        setDefault(device, "auto");
        setDefault(threads, 0);
    }

    @Override
    public String uid() {
        return uid;
    }

    public Param<String> inputCol() {
        return inputCol;
    }

    public Param<String> outputCol() {
        return outputCol;
    }

    public Param<String> modelPath() {
        return modelPath;
    }

    public Param<String> device() {
        return device;
    }

    public IntParam threads() {
        return threads;
    }

    public String getInputCol() {
        return getOrDefault(inputCol);
    }

    public String getOutputCol() {
        return getOrDefault(outputCol);
    }

    /** The model path, or null when not set. */
    public String getModelPath() {
        return isDefined(modelPath) ? getOrDefault(modelPath) : null;
    }

    public String getDevice() {
        return getOrDefault(device);
    }

    public int getThreads() {
        return (Integer) getOrDefault(threads);
    }

    public T setInputCol(String v) {
        return with(inputCol, v);
    }

    public T setOutputCol(String v) {
        return with(outputCol, v);
    }

    public T setModelPath(String v) {
        return with(modelPath, v);
    }

    public T setDevice(String v) {
        return with(device, v);
    }

    public T setThreads(int v) {
        return with(threads, v);
    }

    @Override
    public T copy(ParamMap extra) {
        return defaultCopy(extra);
    }

    /** Sets a param and returns this. */
    @SuppressWarnings("unchecked")
    protected final <V> T with(Param<V> p, V value) {
        set(p, value);
        return (T) this;
    }

    protected final EngineSettings engineSettings() {
        return new EngineSettings(getDevice(), getThreads());
    }

    /** The schema with the output column, after checking the input column (one line naming the column). */
    protected final StructType withOutput(StructType schema, DataType outputType, String expected, DataType... inputs) {
        String in = getInputCol(), out = getOutputCol();
        Option<Object> at = schema.getFieldIndex(in);
        if (at.isEmpty())
            throw AttnException.badInput(getClass().getSimpleName() + ": no input column \"" + in + "\" (columns: "
                    + String.join(", ", schema.fieldNames()) + ")");
        StructField f = schema.fields()[(Integer) at.get()];
        boolean ok = false;
        for (DataType t : inputs) ok |= t.equals(f.dataType());
        if (!ok)
            throw AttnException.badInput(getClass().getSimpleName() + ": input column \"" + in + "\" is "
                    + f.dataType().simpleString() + ", expected " + expected);
        if (schema.getFieldIndex(out).isDefined())
            throw AttnException.badInput(getClass().getSimpleName() + ": output column \"" + out + "\" already exists");
        return schema.add(out, outputType, true);
    }
}
