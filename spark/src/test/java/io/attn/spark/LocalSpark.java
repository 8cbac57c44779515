package io.attn.spark;

import org.apache.spark.sql.SparkSession;

/** One {@code local[2]} session for the test classes of this JVM (starting Spark takes seconds), stopped at exit. */
final class LocalSpark {
    private static SparkSession spark;

    private LocalSpark() {}

    static synchronized SparkSession get() {
        if (spark == null) {
            spark = SparkSession.builder()
                    .master("local[2]")
                    .appName("attn-spark tests")
                    .config("spark.ui.enabled", "false")
                    .config("spark.sql.shuffle.partitions", "4")
                    .getOrCreate();
            Runtime.getRuntime().addShutdownHook(new Thread(spark::stop));
        }
        return spark;
    }
}
