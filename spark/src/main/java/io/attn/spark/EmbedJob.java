package io.attn.spark;

import io.attn.AttnException;
import java.io.IOException;
import java.util.Locale;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.spark.SparkConf;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import scala.Tuple2;

/**
 * Embeds a text corpus on Spark: {@code .txt}, {@code .jsonl} or Parquet in ({@link JobInput}), Parquet out with the
 * columns {@code id} (bigint: the record's number in the input, whatever the partitioning), {@code text} and {@code
 * embedding} ({@code array<float>}, null for a null text), and {@code _SUCCESS} when done.
 *
 * <pre>
 * spark-submit --class io.attn.spark.EmbedJob attn-spark.jar --model DIR --input PATH --output PATH
 *     [--text-col text] [--master URL] [--partitions N] [--pooling mean|cls|max] [--normalize|--no-normalize]
 *     [--max-length N] [--batch-size 256] [--batch-tokens N] [--prompt-name NAME] [--task NAME]
 *     [--device auto|cpu|cuda] [--threads N]
 * </pre>
 *
 * <p>The last line on stdout is {@code {"rows": N, "seconds": S, "rows_per_s": R}}: every input row, the seconds from
 * the start of {@code main} (Spark's start, the model loads, the reading and writing included). The model directory,
 * the input (its format and text column) and the output (it must not exist) are checked before Spark starts; any
 * failure prints one line ({@code attn-spark: ...}) to stderr, removes what the job wrote at the output path, and exits
 * with attn's codes ({@link AttnException.Code#exitStatus}): 2 usage, 3 bad input, 4 device unavailable, 5 out of
 * memory, 6 non-finite values, 1 other. Without {@code --master} and
 * outside {@code spark-submit} the job runs on {@code local[*]}; {@link #run} called inside an application that
 * has a Spark session runs there and leaves the session running.
 *
 * <p>{@link #main} ends the JVM.
 */
public final class EmbedJob {
    private EmbedJob() {}

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs the job and returns the exit code. */
    static int run(String... args) {
        long t0 = System.nanoTime();
        JobArgs a;
        try {
            a = JobArgs.parse(args);
        } catch (JobArgs.UsageException e) {
            System.err.println("attn-spark: " + AttnException.oneLine(e.getMessage()));
            System.err.println(JobArgs.USAGE);
            return AttnException.EXIT_USAGE;
        }
        Configuration hadoop = hadoopConf();
        Path output = null;
        boolean outputStarted = false, ownSession = false;
        SparkSession spark = null;
        try {
            output = new Path(a.output());
            // checked before Spark starts (even a SparkConf logs), so that bad input is one line and nothing else
            TextEmbedder embedder = a.embedder();
            embedder.settings(); // the settings' own checks
            if (!java.nio.file.Files.exists(ModelLocation.localPath(a.model())))
                throw AttnException.badInput("model " + a.model() + ": no such file or directory");
            JobInput input = JobInput.inspect(a.input(), a.textCol(), hadoop);
            if (output.getFileSystem(hadoop).exists(output))
                throw AttnException.badInput("output " + a.output() + " already exists (EmbedJob does not overwrite)");

            ownSession = SparkSession.getDefaultSession().isEmpty();
            if (ownSession) {
                SparkConf conf = new SparkConf().setAppName("attn EmbedJob");
                if (a.master() != null) conf.setMaster(a.master());
                else if (!conf.contains("spark.master")) conf.setMaster("local[*]");
                spark = SparkSession.builder().config(conf).getOrCreate();
            } else spark = SparkSession.getDefaultSession().get();
            Dataset<Row> texts = input.read(spark, a.partitions());
            if (a.partitions() > 0 && texts.rdd().getNumPartitions() != a.partitions())
                texts = texts.repartition(a.partitions());
            outputStarted = true;
            embedder.transform(texts)
                    .select(functions.col("id"), functions.col("text"), functions.col("embedding"))
                    .write()
                    .parquet(a.output());
            long rows = spark.read().parquet(a.output()).count();
            double seconds = (System.nanoTime() - t0) / 1e9;
            System.out.println(String.format(
                    Locale.ROOT,
                    "{\"rows\": %d, \"seconds\": %.3f, \"rows_per_s\": %.1f}",
                    rows,
                    seconds,
                    rows / seconds));
            return 0;
        } catch (Throwable t) {
            if (outputStarted) remove(output, hadoop);
            Tuple2<String, Integer> why = describe(t);
            System.err.println("attn-spark: " + why._1());
            return why._2();
        } finally {
            if (spark != null && ownSession) spark.stop();
        }
    }

    /**
     * A Hadoop configuration with the {@code spark.hadoop.*} settings Spark would use (spark-submit hands them to the
     * driver as system properties).
     */
    private static Configuration hadoopConf() {
        Configuration c = new Configuration();
        for (String k : System.getProperties().stringPropertyNames())
            if (k.startsWith("spark.hadoop.")) c.set(k.substring("spark.hadoop.".length()), System.getProperty(k));
        return c;
    }

    private static void remove(Path output, Configuration hadoop) {
        try {
            output.getFileSystem(hadoop).delete(output, true);
        } catch (IOException e) {
            System.err.println("attn-spark: could not remove the partial output " + output + ": " + e.getMessage());
        }
    }

    /**
     * One line and an exit code for a failure: the {@link AttnException} a task or the driver threw (found under
     * Spark's wrappers), else the first line of the innermost message.
     */
    static Tuple2<String, Integer> describe(Throwable t) {
        Throwable root = t;
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof AttnException a)
                return new Tuple2<>(a.getMessage(), a.code().exitStatus());
            root = c;
        }
        if (root instanceof OutOfMemoryError)
            return new Tuple2<>(
                    "out of memory: raise the driver or executor memory",
                    AttnException.Code.DEVICE_OUT_OF_MEMORY.exitStatus());
        String m = root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
        int nl = m.indexOf('\n');
        return new Tuple2<>(
                root.getClass().getSimpleName() + ": " + AttnException.oneLine(nl < 0 ? m : m.substring(0, nl)),
                AttnException.Code.INTERNAL.exitStatus());
    }
}
