package io.attn.engine;

import java.util.List;

/**
 * {@code attn tune}: what to measure ({@link Request}) and what was found ({@link Report}), through {@link
 * Devices#tune}. The CPU backend measures its GEMM blocking and causal attention's key tile on this machine and caches them per CPU in the user's cache
 * directory (docs/performance.md, "Tuning on the machine").
 */
public final class Tune {
    private Tune() {}

    /**
     * @param seconds the search's budget (about; at least the time of a few products)
     * @param sweep also time every blocking of the searched space, to judge the search
     * @param sweepRounds rounds per blocking of the sweep
     * @param save write the result to the cache
     */
    public record Request(double seconds, boolean sweep, int sweepRounds, boolean save) {
        public Request {
            if (!(seconds >= 0 && seconds <= 3600)) throw new IllegalArgumentException("seconds must be 0 to 3600");
            if (sweepRounds < 1 || sweepRounds > 100)
                throw new IllegalArgumentException("sweep rounds must be 1 to 100");
        }
    }

    /**
     * @param lines what was found, for people
     * @param json the same as one JSON object (the CPU, the blocking, the figures; with a sweep, every blocking's)
     * @param tableEntry the line to add to the backend's table for this CPU
     */
    public record Report(List<String> lines, String json, String tableEntry) {
        public Report {
            lines = List.copyOf(lines);
        }
    }
}
