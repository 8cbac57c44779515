package io.attn.spark;

import io.attn.AttnException;
import io.attn.io.Json;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.io.compress.CompressionCodec;
import org.apache.hadoop.io.compress.CompressionCodecFactory;
import org.apache.hadoop.mapred.FileInputFormat;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.TextInputFormat;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.Type;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * {@link EmbedJob}'s input: a {@code .txt} file (one text per line), a {@code .jsonl} file (one JSON object per line,
 * the text under a field) or a Parquet file (the text in a string column), or a directory of such files (all of one
 * kind; names starting with {@code _} or {@code .} are skipped). Text files may be compressed ({@code .gz}, {@code
 * .bz2}).
 *
 * <p>{@link #inspect} checks on the driver, before Spark starts, what a task would otherwise find late: the path
 * exists, the format is known, the text column is there and is a string (a Parquet file's schema; for JSONL the first
 * {@value #SAMPLE} records). {@link #read} gives {@code (id bigint, text string)}: {@code id} is the record's number
 * counted over the files in name order from 0 (the line number for {@code .txt}; blank lines of a JSONL file are
 * skipped), the same whatever the partitioning or master. A JSON record is one strict JSON object, read as {@code attn
 * embed} reads it ({@link Json#textField}); one whose field is missing or null gives a null text.
 *
 * <p>Immutable and thread-safe.
 *
 * @param format the kind of the files
 * @param files the data files, in name order
 * @param textCol the field or column holding the text (unused for {@code .txt})
 */
record JobInput(Format format, List<String> files, String textCol) {
    /** JSON records read on the driver to find the text field. */
    static final int SAMPLE = 1000;

    enum Format {
        TEXT,
        JSONL,
        PARQUET
    }

    static JobInput inspect(String input, String textCol, Configuration conf) {
        try {
            Path p = new Path(input);
            FileSystem fs = p.getFileSystem(conf);
            if (!fs.exists(p)) throw AttnException.badInput("input " + input + ": no such file or directory");
            List<String> files = new ArrayList<>();
            if (fs.getFileStatus(p).isDirectory()) {
                FileStatus[] all = fs.listStatus(p);
                Arrays.sort(
                        all,
                        (a, b) -> a.getPath().getName().compareTo(b.getPath().getName()));
                for (FileStatus f : all) {
                    String n = f.getPath().getName();
                    if (f.isFile() && !n.startsWith("_") && !n.startsWith("."))
                        files.add(f.getPath().toString());
                }
                if (files.isEmpty())
                    throw AttnException.badInput("input " + input + ": no data files in the directory");
            } else files.add(p.toString());
            Format format = null;
            for (String f : files) {
                Format ff = formatOf(f);
                if (ff == null) throw AttnException.badInput("input " + f + ": not a .txt, .jsonl or .parquet file");
                if (format != null && ff != format)
                    throw AttnException.badInput(
                            "input " + input + ": holds both " + format.name().toLowerCase(Locale.ROOT) + " and "
                                    + ff.name().toLowerCase(Locale.ROOT) + " files");
                format = ff;
            }
            JobInput in = new JobInput(format, List.copyOf(files), textCol);
            if (format == Format.PARQUET) in.checkParquetColumn(fs, conf);
            if (format == Format.JSONL) in.checkJsonField(fs, conf);
            return in;
        } catch (IOException e) {
            throw AttnException.badInput("input " + input + ": cannot read (" + e.getMessage() + ")");
        }
    }

    /** A file as the user would write it: a local file's path without its {@code file:} scheme. */
    private static String shown(String file) {
        java.net.URI u = new Path(file).toUri();
        return "file".equals(u.getScheme()) ? u.getPath() : file;
    }

    private static Format formatOf(String file) {
        String n = file.toLowerCase(Locale.ROOT).replaceFirst("\\.(gz|bz2)$", "");
        if (n.endsWith(".txt")) return Format.TEXT;
        if (n.endsWith(".jsonl") || n.endsWith(".ndjson") || n.endsWith(".json")) return Format.JSONL;
        if (n.endsWith(".parquet")) return Format.PARQUET;
        return null;
    }

    /** The text column of the first file's schema (Spark writes one schema for a directory's files). */
    private void checkParquetColumn(FileSystem fs, Configuration conf) throws IOException {
        String first = shown(files.get(0));
        MessageType schema;
        try (ParquetFileReader r = ParquetFileReader.open(HadoopInputFile.fromPath(new Path(files.get(0)), conf))) {
            schema = r.getFooter().getFileMetaData().getSchema();
        } catch (RuntimeException e) {
            throw AttnException.badInput("input " + first + ": not a Parquet file (" + e.getMessage() + ")");
        }
        if (!schema.containsField(textCol)) {
            List<String> names = new ArrayList<>();
            for (Type t : schema.getFields()) names.add(t.getName());
            throw AttnException.badInput("input " + first + ": no column \"" + textCol + "\" (--text-col; columns: "
                    + String.join(", ", names) + ")");
        }
        Type t = schema.getType(textCol);
        boolean string = t.isPrimitive()
                && t.asPrimitiveType().getPrimitiveTypeName() == PrimitiveType.PrimitiveTypeName.BINARY
                && t.getLogicalTypeAnnotation() instanceof LogicalTypeAnnotation.StringLogicalTypeAnnotation;
        if (!string)
            throw AttnException.badInput("input " + first + ": column \"" + textCol + "\" is "
                    + (t.isPrimitive()
                            ? t.asPrimitiveType().getPrimitiveTypeName().name().toLowerCase(Locale.ROOT)
                            : "a group")
                    + (t.getLogicalTypeAnnotation() == null ? "" : " (" + t.getLogicalTypeAnnotation() + ")")
                    + ", not a string");
    }

    /** Some record among the first {@value #SAMPLE} of the first file has the text field; those read are objects. */
    private void checkJsonField(FileSystem fs, Configuration conf) throws IOException {
        String first = shown(files.get(0));
        Path p = new Path(files.get(0));
        CompressionCodec codec = new CompressionCodecFactory(conf).getCodec(p);
        try (InputStream raw = fs.open(p);
                BufferedReader r = new BufferedReader(new InputStreamReader(
                        codec == null ? raw : codec.createInputStream(raw), StandardCharsets.UTF_8))) {
            String line;
            long n = 0, lineNo = 0;
            while (n < SAMPLE && (line = r.readLine()) != null) {
                lineNo++;
                if (line.isBlank()) continue;
                n++;
                String where = "input " + first + ": line " + lineNo;
                // the verdict every record gets; a null text still shows the field is there
                if (textOf(line, textCol, where) != null
                        || Json.parseObject(line, where).containsKey(textCol)) return;
            }
            throw AttnException.badInput("input " + first + ": no record among the first " + n + " has the field \""
                    + textCol + "\" (--text-col)");
        }
    }

    /**
     * The text of a JSON line, read as every JSON line is ({@link Json#textField}: one strict JSON object, the field a
     * string); null when the field is missing or null.
     */
    static String textOf(String line, String field, String where) {
        return Json.textField(line, field, where);
    }

    /** {@code (id bigint, text string)} in {@code minPartitions} or more partitions (0: Spark's default). */
    Dataset<Row> read(SparkSession spark, int minPartitions) {
        StructType schema =
                new StructType().add("id", DataTypes.LongType, false).add("text", DataTypes.StringType, true);
        if (format == Format.PARQUET) return readParquet(spark);
        JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        JobConf conf = new JobConf(sc.hadoopConfiguration());
        FileInputFormat.setInputPaths(conf, files.stream().map(Path::new).toArray(Path[]::new));
        // splits come in the order of the files given, each file's from its start, so zipWithIndex numbers the lines
        // in file order whatever the split size
        JavaRDD<String> lines = sc.hadoopRDD(
                        conf,
                        TextInputFormat.class,
                        LongWritable.class,
                        Text.class,
                        minPartitions > 0 ? minPartitions : sc.defaultMinPartitions())
                .map(t -> t._2().toString()); // the reader reuses its Text: copy before anything else
        if (format == Format.JSONL) lines = lines.filter(s -> !s.isBlank());
        boolean json = format == Format.JSONL;
        String field = textCol;
        JavaRDD<Row> rows = lines.zipWithIndex()
                .map(t -> RowFactory.create(t._2(), json ? textOf(t._1(), field, "input record " + t._2()) : t._1()));
        return spark.createDataFrame(rows, schema);
    }

    /**
     * Parquet: the record number is the file's first number (the rows of the files before it, in name order) plus the
     * row's index in its file ({@code _metadata.row_index}); a first job counts each file's rows.
     */
    private Dataset<Row> readParquet(SparkSession spark) {
        Dataset<Row> raw = spark.read()
                .parquet(files.toArray(String[]::new))
                .select(
                        functions.col(textCol).as("text"),
                        functions.col("_metadata.file_path").as("file"),
                        functions.col("_metadata.row_index").as("row"));
        List<Row> counts = raw.groupBy("file").count().orderBy("file").collectAsList();
        List<Row> firsts = new ArrayList<>();
        long at = 0;
        for (Row c : counts) {
            firsts.add(RowFactory.create(c.getString(0), at));
            at += c.getLong(1);
        }
        Dataset<Row> first = spark.createDataFrame(
                firsts, new StructType().add("file", DataTypes.StringType).add("first", DataTypes.LongType));
        return raw.join(functions.broadcast(first), "file")
                .select(functions.col("first").plus(functions.col("row")).as("id"), functions.col("text"));
    }
}
