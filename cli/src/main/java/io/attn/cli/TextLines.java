package io.attn.cli;

import io.attn.AttnException;
import io.attn.io.Json;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Texts streamed from a file, a chunk at a time, never the whole file: {@code .txt} is one text per line (UTF-8; a
 * {@code \r} before the line break is dropped; an empty line is an empty text), {@code .jsonl} one JSON object per line
 * with the text under a field ({@code text} by default; blank lines are skipped), read by {@link Json#textField} as the
 * Spark job reads them. Invalid UTF-8, a line that is not a JSON object, a field that is missing or not a string: one
 * error naming the file and line.
 *
 * <p>Not thread-safe.
 */
final class TextLines implements AutoCloseable {
    /** A chunk ends after this many texts or characters, whichever comes first. */
    static final int CHUNK_TEXTS = 1024, CHUNK_CHARS = 1 << 20;

    /** A longer line is refused (a file without line breaks is not a list of texts). */
    static final int MAX_LINE_BYTES = 16 << 20;

    private final Path file;
    private final InputStream in;
    private final CharsetDecoder utf8 = StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
    private byte[] buf = new byte[1 << 12];
    private final boolean jsonl;
    private final String field;
    private long line;

    private TextLines(Path file, InputStream in, boolean jsonl, String field) {
        this.file = file;
        this.in = in;
        this.jsonl = jsonl;
        this.field = field;
    }

    static TextLines open(Path file, String field) {
        String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
        boolean jsonl = name.endsWith(".jsonl") || name.endsWith(".ndjson");
        if (!jsonl && !name.endsWith(".txt"))
            throw AttnException.badInput(file + ": expected a .txt (one text per line) or .jsonl file");
        try {
            return new TextLines(file, new BufferedInputStream(Files.newInputStream(file), 1 << 16), jsonl, field);
        } catch (NoSuchFileException e) {
            throw AttnException.badInput(file + ": no such file");
        } catch (IOException e) {
            throw AttnException.badInput(file + ": cannot read (" + e.getMessage() + ")");
        }
    }

    /** Counts the texts of a file in one streaming pass (for the progress bar), or -1 when it cannot. */
    static long count(Path file, String field) {
        try (TextLines t = open(file, field)) {
            long n = 0;
            List<String> c;
            while (!(c = t.next()).isEmpty()) n += c.size();
            return n;
        } catch (AttnException e) {
            return -1;
        }
    }

    /** The next chunk of texts; empty at the end of the file. */
    List<String> next() {
        List<String> out = new ArrayList<>();
        long chars = 0;
        try {
            String s;
            while (out.size() < CHUNK_TEXTS && chars < CHUNK_CHARS && (s = readLine()) != null) {
                line++;
                if (jsonl) {
                    if (s.isBlank()) continue;
                    s = textOf(s);
                }
                out.add(s);
                chars += s.length();
            }
            return out;
        } catch (IOException e) {
            throw AttnException.badInput(file + ": cannot read at line " + (line + 1) + " (" + e.getMessage() + ")");
        }
    }

    /** The next line without its line break (and a {@code \r} before it), strictly decoded; null at the end. */
    private String readLine() throws IOException {
        int n = 0, b;
        while ((b = in.read()) >= 0 && b != '\n') {
            if (n == buf.length) {
                if (n >= MAX_LINE_BYTES)
                    throw AttnException.badInput(file + ": line " + (line + 1) + " is longer than "
                            + (MAX_LINE_BYTES >> 20) + " MiB (one text per line is expected)");
                buf = Arrays.copyOf(buf, Math.min(2 * n, MAX_LINE_BYTES));
            }
            buf[n++] = (byte) b;
        }
        if (b < 0 && n == 0) return null;
        if (n > 0 && buf[n - 1] == '\r') n--;
        try {
            return utf8.decode(ByteBuffer.wrap(buf, 0, n)).toString();
        } catch (CharacterCodingException e) {
            throw AttnException.badInput(file + ": line " + (line + 1) + " is not valid UTF-8");
        }
    }

    /** The text of a JSON line: read as every JSON line is ({@link Json#textField}); a missing field is an error. */
    private String textOf(String s) {
        String where = file + ": line " + line;
        String text = Json.textField(s, field, where);
        if (text == null) throw AttnException.badInput(where + " has no string field \"" + field + "\"");
        return text;
    }

    @Override
    public void close() {
        try {
            in.close();
        } catch (IOException ignored) {
            // reading is over; nothing to save
        }
    }
}
