package io.attn.spark;

import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;

/** Row helpers of the transformers' tasks. Stateless and thread-safe. */
final class Rows {
    private Rows() {}

    /** The row's values with {@code v} after them. */
    static Row append(Row r, Object v) {
        int n = r.length();
        Object[] a = new Object[n + 1];
        for (int i = 0; i < n; i++) a[i] = r.get(i);
        a[n] = v;
        return RowFactory.create(a);
    }
}
