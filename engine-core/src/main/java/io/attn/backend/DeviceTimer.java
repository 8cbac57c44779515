package io.attn.backend;

/**
 * Device-side timing of the work a backend queues ({@link Backend#deviceTimer}): on CUDA a pair of events recorded on
 * the backend's stream, so that a benchmark reports the device's own time of the work between {@link #start} and
 * {@link #stop} beside its wall clock. Not thread-safe; close it when done.
 */
public interface DeviceTimer extends AutoCloseable {
    /** Marks the start: work queued after this call is timed. */
    void start();

    /** Marks the end, waits for the work queued before it, and returns the device time since {@link #start}, in ms. */
    double stop();

    @Override
    void close();
}
