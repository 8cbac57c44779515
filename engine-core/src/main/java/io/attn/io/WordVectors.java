package io.attn.io;

import io.attn.AttnException;
import io.attn.tensor.Tensor;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Word embeddings in the GloVe / word2vec text form: one {@code word v1 ... vd} line per word, fields separated by
 * spaces or tabs, optionally preceded by a word2vec {@code count dim} header line (a first line of exactly two
 * non-negative integers). The file must be UTF-8 (a leading BOM is skipped); invalid UTF-8 or a line with the wrong
 * number of values is an error naming the line. Blank lines are skipped. When a header is present its word count must
 * match the file.
 *
 * <p>Policies: duplicate words keep the <b>first</b> vector (later ones are counted in {@link #duplicates()}). A line
 * with more than {@code dim + 1} fields whose second field is not a number is taken as a word containing spaces (as in
 * glove.840B); otherwise a wrong field count is an error. Lookup is exact and case-sensitive; use {@link #tokenize}
 * (which lower-cases) for GloVe-style vocabularies.
 *
 * <p>Memory: the file is streamed; vectors live in 4 MiB float blocks (no growth copies), so a file of a few hundred
 * MB costs about its float payload plus the word map.
 */
public final class WordVectors {
    /** What {@link #embed} does with a token that has no vector. */
    public enum UnknownPolicy {
        /** Use a zero vector. */
        ZERO,
        /** Leave the token out (the result has fewer rows). */
        SKIP,
        /** Fail with a BAD_INPUT error listing the unknown tokens. */
        ERROR
    }

    /** The embedded tokens, (L, E), and the tokens that had no vector (in order, repeats kept). */
    public record Embedding(Tensor tensor, List<String> unknown) {}

    /** Longest line accepted. */
    static final int MAX_LINE = 16 << 20;

    private final String source;
    private final int dim;
    private final int rowsPerBlock;
    private final List<float[]> blocks;
    private final Map<String, Integer> index;
    private final int duplicates;

    private WordVectors(
            String source, int dim, List<float[]> blocks, int rowsPerBlock, Map<String, Integer> index, int dups) {
        this.source = source;
        this.dim = dim;
        this.blocks = blocks;
        this.rowsPerBlock = rowsPerBlock;
        this.index = index;
        this.duplicates = dups;
    }

    /** Loads a word-vector text file. */
    public static WordVectors load(Path path) {
        IoUtil.refuseSpecialFile(path);
        try (InputStream in = Files.newInputStream(path)) {
            return load(in, path.toString());
        } catch (IOException e) {
            throw IoUtil.io(path.toString(), "read", e);
        }
    }

    /** Loads word vectors from a stream (not closed); {@code name} labels error messages. */
    public static WordVectors load(InputStream in, String name) {
        try {
            return new Loader(in, name).load();
        } catch (IOException e) {
            throw IoUtil.io(name, "read", e);
        }
    }

    /** Vector width. */
    public int dim() {
        return dim;
    }

    /** Number of distinct words. */
    public int size() {
        return index.size();
    }

    /** How many later lines repeated an earlier word (and were ignored: first wins). */
    public int duplicates() {
        return duplicates;
    }

    public boolean contains(String word) {
        return index.containsKey(word);
    }

    /** A copy of the vector of {@code word}, or null when it has none. */
    public float[] get(String word) {
        Integer row = index.get(word);
        if (row == null) return null;
        float[] v = new float[dim];
        copyRow(row, v, 0);
        return v;
    }

    private void copyRow(int row, float[] dst, int off) {
        System.arraycopy(blocks.get(row / rowsPerBlock), (row % rowsPerBlock) * dim, dst, off, dim);
    }

    /** Embeds {@code tokens} as an (L, dim) tensor, handling unknown tokens by {@code policy}. */
    public Embedding embed(List<String> tokens, UnknownPolicy policy) {
        List<String> unknown = new ArrayList<>();
        int known = 0;
        for (String t : tokens) {
            if (index.containsKey(t)) known++;
            else unknown.add(t);
        }
        if (policy == UnknownPolicy.ERROR && !unknown.isEmpty()) {
            List<String> shown = unknown.subList(0, Math.min(10, unknown.size()));
            StringBuilder sb = new StringBuilder();
            for (String s : shown)
                sb.append(sb.isEmpty() ? "" : ", ").append('\'').append(s).append('\'');
            if (unknown.size() > shown.size()) sb.append(", ...");
            throw IoUtil.bad(source, unknown.size() + " token(s) not in the vocabulary: " + sb);
        }
        int rows = policy == UnknownPolicy.SKIP ? known : tokens.size();
        float[] out = new float[Math.multiplyExact(rows, dim)];
        int r = 0;
        for (String t : tokens) {
            Integer row = index.get(t);
            if (row != null) copyRow(row, out, r * dim);
            if (row != null || policy == UnknownPolicy.ZERO) r++;
        }
        return new Embedding(Tensor.of(out, rows, dim), List.copyOf(unknown));
    }

    /**
     * Splits text like common GloVe vocabularies expect: lower-cases (locale-independent), splits on whitespace, keeps
     * letters and digits together, keeps an apostrophe (' or \u2019, written as ') that sits between two letters or
     * digits inside the word ("don't", "o'clock"), and emits every other punctuation or symbol character as a
     * one-character token ("end." gives "end", ".").
     */
    public static List<String> tokenize(String text) {
        String s = text.toLowerCase(Locale.ROOT);
        List<String> out = new ArrayList<>();
        StringBuilder w = new StringBuilder();
        int i = 0;
        while (i < s.length()) {
            int cp = s.codePointAt(i);
            int n = Character.charCount(cp);
            if (wordChar(cp)) w.appendCodePoint(cp);
            else if ((cp == '\'' || cp == '\u2019')
                    && !w.isEmpty()
                    && i + n < s.length()
                    && wordChar(s.codePointAt(i + n))) w.append('\'');
            else {
                if (!w.isEmpty()) {
                    out.add(w.toString());
                    w.setLength(0);
                }
                if (!Character.isWhitespace(cp) && !Character.isSpaceChar(cp) && !Character.isISOControl(cp))
                    out.add(cp == '\u2019' ? "'" : new String(Character.toChars(cp)));
            }
            i += n;
        }
        if (!w.isEmpty()) out.add(w.toString());
        return out;
    }

    private static boolean wordChar(int cp) {
        int t = Character.getType(cp);
        return Character.isLetterOrDigit(cp)
                || t == Character.NON_SPACING_MARK
                || t == Character.COMBINING_SPACING_MARK
                || t == Character.ENCLOSING_MARK;
    }

    // ------------------------------------------------------------ loading

    private static final class Loader {
        final InputStream in;
        final String name;
        final byte[] buf = new byte[1 << 16];
        int bufPos, bufLen;
        byte[] line = new byte[1 << 12];
        int lineLen;
        long lineNo;
        int[] fs = new int[64], fe = new int[64];
        int nf;
        final CharsetDecoder utf8 = StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);

        int dim = -1;
        long declaredCount = -1;
        int rowsPerBlock;
        final List<float[]> blocks = new ArrayList<>();
        final Map<String, Integer> index = new HashMap<>();
        int rows, dups;

        Loader(InputStream in, String name) {
            this.in = in;
            this.name = name;
        }

        AttnException err(String problem) {
            return IoUtil.bad(name, "line " + lineNo + ": " + problem);
        }

        /** Reads the next line into {@code line} (without the newline or a trailing CR); false at end of input. */
        boolean nextLine() throws IOException {
            lineLen = 0;
            boolean any = false;
            while (true) {
                if (bufPos == bufLen) {
                    bufLen = in.read(buf);
                    bufPos = 0;
                    if (bufLen <= 0) {
                        bufLen = 0;
                        if (!any) return false;
                        break;
                    }
                }
                any = true;
                int nl = -1;
                for (int k = bufPos; k < bufLen; k++)
                    if (buf[k] == '\n') {
                        nl = k;
                        break;
                    }
                int end = nl < 0 ? bufLen : nl;
                append(bufPos, end - bufPos);
                bufPos = nl < 0 ? bufLen : nl + 1;
                if (nl >= 0) break;
            }
            lineNo++;
            if (lineLen > 0 && line[lineLen - 1] == '\r') lineLen--;
            return true;
        }

        void append(int from, int n) {
            if (lineLen + n > MAX_LINE) {
                lineNo++;
                throw err("longer than " + IoUtil.bytes(MAX_LINE));
            }
            if (lineLen + n > line.length) line = Arrays.copyOf(line, Math.max(lineLen + n, line.length * 2));
            System.arraycopy(buf, from, line, lineLen, n);
            lineLen += n;
        }

        void split() {
            nf = 0;
            int k = 0;
            if (lineNo == 1
                    && lineLen >= 3
                    && (line[0] & 0xff) == 0xEF
                    && (line[1] & 0xff) == 0xBB
                    && (line[2] & 0xff) == 0xBF) k = 3;
            while (k < lineLen) {
                while (k < lineLen && (line[k] == ' ' || line[k] == '\t')) k++;
                if (k >= lineLen) break;
                int s = k;
                while (k < lineLen && line[k] != ' ' && line[k] != '\t') k++;
                if (nf == fs.length) {
                    fs = Arrays.copyOf(fs, nf * 2);
                    fe = Arrays.copyOf(fe, nf * 2);
                }
                fs[nf] = s;
                fe[nf++] = k;
            }
        }

        void checkUtf8() {
            for (int k = 0; k < lineLen; k++)
                if (line[k] < 0) {
                    try {
                        utf8.reset().decode(ByteBuffer.wrap(line, 0, lineLen));
                    } catch (CharacterCodingException e) {
                        throw err("invalid UTF-8");
                    }
                    return;
                }
        }

        WordVectors load() throws IOException {
            while (nextLine()) {
                split();
                if (nf == 0) continue;
                checkUtf8();
                if (dim < 0 && declaredCount < 0 && rows == 0 && dups == 0 && nf == 2) {
                    long c = nonNegInt(0), d = nonNegInt(1);
                    if (c >= 0 && d >= 0) {
                        if (d == 0 || d > 1 << 20)
                            throw err("word2vec header declares dim " + d + " (must be 1 to " + (1 << 20) + ")");
                        declaredCount = c;
                        dim = (int) d;
                        continue;
                    }
                }
                if (dim < 0) {
                    dim = nf - 1;
                    if (dim == 0) throw err("a word with no vector values");
                }
                int wordFields;
                if (nf == dim + 1) wordFields = 1;
                else if (nf > dim + 1 && Float.isNaN(Decimal.parse(line, fs[1], fe[1]))) wordFields = nf - dim;
                else throw err("expected " + dim + " values after the word but found " + (nf - 1));
                if (rowsPerBlock == 0) rowsPerBlock = Math.max(1, (1 << 20) / dim);
                int slot = rows % rowsPerBlock;
                float[] block = blockFor(rows);
                int base = slot * dim;
                for (int k = 0; k < dim; k++) {
                    int f = wordFields + k;
                    float v = Decimal.parse(line, fs[f], fe[f]);
                    if (Float.isNaN(v)) {
                        String t = new String(line, fs[f], Math.min(fe[f] - fs[f], 40), StandardCharsets.UTF_8);
                        throw err("'" + t + "' is not a finite float32 number (value " + (k + 1) + ")");
                    }
                    block[base + k] = v;
                }
                String word = new String(line, fs[0], fe[wordFields - 1] - fs[0], StandardCharsets.UTF_8);
                if (wordFields > 1) word = word.replaceAll("[ \t]+", " ");
                if (index.containsKey(word)) dups++;
                else {
                    if (rows == Integer.MAX_VALUE) throw err("too many words");
                    index.put(word, rows++);
                }
            }
            if (dim < 0) throw IoUtil.bad(name, "no word vectors in the file");
            if (declaredCount >= 0 && declaredCount != rows + dups)
                throw IoUtil.bad(name, "header declares " + declaredCount + " words but the file has " + (rows + dups));
            if (rowsPerBlock == 0) rowsPerBlock = 1;
            // trim the last block
            int full = rows / rowsPerBlock, rem = rows % rowsPerBlock;
            if (rem > 0 && blocks.get(full).length != rem * dim)
                blocks.set(full, Arrays.copyOf(blocks.get(full), rem * dim));
            while (blocks.size() > (rows + rowsPerBlock - 1) / rowsPerBlock) blocks.removeLast();
            return new WordVectors(name, dim, blocks, rowsPerBlock, index, dups);
        }

        /**
         * The block that holds {@code row}, created or grown as needed. Blocks hold {@code rowsPerBlock} rows; only
         * the first one starts small and doubles, so tiny files do not pay for a full 4 MiB block.
         */
        float[] blockFor(int row) {
            int b = row / rowsPerBlock, need = (row % rowsPerBlock + 1) * dim;
            if (b == blocks.size())
                blocks.add(new float[b == 0 ? Math.min(64, rowsPerBlock) * dim : rowsPerBlock * dim]);
            float[] block = blocks.get(b);
            if (block.length < need) {
                block = Arrays.copyOf(block, (int) Math.min((long) rowsPerBlock * dim, 2L * block.length));
                blocks.set(b, block);
            }
            return block;
        }

        long nonNegInt(int f) {
            int s = fs[f], e = fe[f];
            if (e - s > 18) return -1;
            long v = 0;
            for (int k = s; k < e; k++) {
                if (line[k] < '0' || line[k] > '9') return -1;
                v = v * 10 + (line[k] - '0');
            }
            return v;
        }
    }
}
