package io.attn.spark;

import org.apache.spark.sql.SparkSession;

/**
 * One {@code local[2]} session for the test classes of this JVM (starting Spark takes seconds), stopped at exit or by
 * a test that needs its own (a JVM holds one Spark context at a time).
 */
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
        }
        return spark;
    }

    /** Stops the session; the next {@link #get} starts another. */
    static synchronized void stop() {
        if (spark != null) spark.stop();
        spark = null;
    }
}
