package io.attn.spark;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * A partition's rows mapped a chunk at a time: rows are read until a chunk holds {@code maxRows} rows or {@code
 * maxSize} units of payload (characters, floats), the chunk's non-null payloads go to the model in one call, and the
 * rows come out in input order with their results (null for a null payload). The next chunk is read only when this one
 * has been consumed, so a task holds one chunk at a time whatever the partition's size.
 *
 * <p>Not thread-safe: one task's iterator.
 *
 * @param <I> input row
 * @param <P> payload (a text, a sequence)
 * @param <R> result (a vector)
 * @param <O> output row
 */
final class ChunkedMap<I, P, R, O> implements Iterator<O> {
    private final Iterator<I> in;
    private final Function<I, P> payload;
    private final ToLongFunction<P> size;
    private final int maxRows;
    private final long maxSize;
    private final Function<List<P>, List<R>> compute;
    private final BiFunction<I, R, O> output;
    private final List<O> chunk = new ArrayList<>();
    private int next;

    ChunkedMap(
            Iterator<I> in,
            Function<I, P> payload,
            ToLongFunction<P> size,
            int maxRows,
            long maxSize,
            Function<List<P>, List<R>> compute,
            BiFunction<I, R, O> output) {
        if (maxRows <= 0 || maxSize <= 0) throw new IllegalArgumentException("chunk limits must be positive");
        this.in = in;
        this.payload = payload;
        this.size = size;
        this.maxRows = maxRows;
        this.maxSize = maxSize;
        this.compute = compute;
        this.output = output;
    }

    @Override
    public boolean hasNext() {
        if (next < chunk.size()) return true;
        chunk.clear();
        next = 0;
        if (!in.hasNext()) return false;
        List<I> rows = new ArrayList<>();
        List<P> payloads = new ArrayList<>();
        BitSet has = new BitSet();
        long units = 0;
        while (rows.size() < maxRows && units < maxSize && in.hasNext()) {
            I row = in.next();
            P p = payload.apply(row);
            rows.add(row);
            if (p != null) {
                has.set(rows.size() - 1);
                payloads.add(p);
                units += size.applyAsLong(p);
            }
        }
        List<R> results = payloads.isEmpty() ? List.of() : compute.apply(payloads);
        if (results.size() != payloads.size())
            throw new IllegalStateException(results.size() + " results for " + payloads.size() + " inputs");
        for (int i = 0, r = 0; i < rows.size(); i++)
            chunk.add(output.apply(rows.get(i), has.get(i) ? results.get(r++) : null));
        return true;
    }

    @Override
    public O next() {
        if (!hasNext()) throw new NoSuchElementException();
        O o = chunk.get(next);
        chunk.set(next++, null); // the consumer owns it now
        return o;
    }
}
