package io.attn.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import org.junit.jupiter.api.Test;

/** A partition mapped a chunk at a time: order kept, nulls passed over, chunks bounded, read lazily. */
class ChunkedMapTest {
    /** Records the chunks the model was called with; the result of a text is its upper case. */
    static final class Model {
        final List<List<String>> calls = new ArrayList<>();

        List<String> apply(List<String> texts) {
            calls.add(List.copyOf(texts));
            return texts.stream().map(String::toUpperCase).toList();
        }
    }

    static ChunkedMap<String, String, String, String> map(Iterator<String> in, int rows, long chars, Model m) {
        return new ChunkedMap<>(
                in, s -> s.equals("-") ? null : s, String::length, rows, chars, m::apply, (row, r) -> row + "=" + r);
    }

    static List<String> drain(Iterator<String> it) {
        List<String> out = new ArrayList<>();
        it.forEachRemaining(out::add);
        return out;
    }

    @Test
    void rowsComeOutInOrderWithTheirResultsAndNullsPassOver() {
        Model m = new Model();
        List<String> out =
                drain(map(List.of("a", "-", "bb", "c", "-", "dd", "e").iterator(), 3, 100, m));
        assertEquals(List.of("a=A", "-=null", "bb=BB", "c=C", "-=null", "dd=DD", "e=E"), out);
        assertEquals(List.of(List.of("a", "bb"), List.of("c", "dd"), List.of("e")), m.calls);
    }

    @Test
    void aChunkEndsAtItsSizeBudget() {
        Model m = new Model();
        drain(map(List.of("aaaa", "bbbb", "c", "dddddddd", "e").iterator(), 100, 5, m));
        assertEquals(List.of(List.of("aaaa", "bbbb"), List.of("c", "dddddddd"), List.of("e")), m.calls);
    }

    @Test
    void onlyNullsNeverCallTheModelAndEmptyInputGivesNothing() {
        Model m = new Model();
        assertEquals(List.of("-=null", "-=null"), drain(map(List.of("-", "-").iterator(), 10, 10, m)));
        assertEquals(List.of(), drain(map(List.<String>of().iterator(), 10, 10, m)));
        assertEquals(List.of(), m.calls);
    }

    @Test
    void theNextChunkIsReadOnlyWhenThisOneIsConsumed() {
        Model m = new Model();
        List<String> read = new ArrayList<>();
        Iterator<String> source = Arrays.asList("a", "b", "c", "d", "e").iterator();
        Iterator<String> counting = new Iterator<>() {
            public boolean hasNext() {
                return source.hasNext();
            }

            public String next() {
                String s = source.next();
                read.add(s);
                return s;
            }
        };
        Iterator<String> it = map(counting, 2, 100, m);
        assertEquals("a=A", it.next());
        assertEquals(List.of("a", "b"), read);
        it.next();
        assertEquals(List.of("a", "b"), read);
        it.next();
        assertEquals(List.of("a", "b", "c", "d"), read);
        drain(it);
        assertFalse(it.hasNext());
        assertThrows(NoSuchElementException.class, it::next);
    }

    @Test
    void aModelGivingTheWrongNumberOfResultsIsAnError() {
        ChunkedMap<String, String, String, String> bad = new ChunkedMap<>(
                List.of("a", "b").iterator(), s -> s, String::length, 10, 10, l -> List.of("x"), (row, r) -> row);
        assertEquals(
                "1 results for 2 inputs",
                assertThrows(IllegalStateException.class, bad::hasNext).getMessage());
    }
}
