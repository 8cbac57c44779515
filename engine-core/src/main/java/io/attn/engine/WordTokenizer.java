package io.attn.engine;

import io.attn.AttnException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The word-level tokenizer of the tutorials' small language models ({@link LanguageModel}): a vocabulary file with one
 * token per line (line {@code i} is id {@code i}), which must hold {@code <unk>}, {@code <bos>} and {@code <eos>}. Text
 * splits at whitespace, and every punctuation or symbol character is a token of its own ({@code "Hello, world!"} gives
 * {@code hello , world !}); a word outside the vocabulary becomes {@code <unk>}. When no vocabulary entry has an
 * upper-case letter the text is lower-cased first (as torchtext's {@code basic_english}), otherwise case is kept.
 *
 * <pre>{@code
 * WordTokenizer tok = WordTokenizer.read(Path.of("tiny-lm.vocab.txt"));
 * int[] prompt = tok.encodeWithBos("twinkle twinkle");
 * Generation g = lm.generate(new int[][] {prompt}, GenerationOptions.defaults().withEos(tok.eos()), null);
 * String text = tok.decode(g.tokens()[0]);
 * }</pre>
 *
 * <p>A bad vocabulary is an {@link AttnException} BAD_INPUT naming the file and the line. Immutable and thread-safe.
 */
public final class WordTokenizer {
    public static final String UNK = "<unk>", BOS = "<bos>", EOS = "<eos>";

    private final List<String> tokens;
    private final Map<String, Integer> ids = new HashMap<>();
    private final boolean lowerCase;
    private final int unk, bos, eos;

    /** A tokenizer over {@code vocabulary} (entry {@code i} is id {@code i}). */
    public WordTokenizer(List<String> vocabulary) {
        if (vocabulary == null) throw AttnException.badInput("vocabulary is null");
        this.tokens = List.copyOf(vocabulary);
        boolean upper = false;
        for (int i = 0; i < tokens.size(); i++) {
            String t = tokens.get(i);
            if (t.isEmpty() || t.chars().anyMatch(Character::isWhitespace))
                throw AttnException.badInput("vocabulary line " + (i + 1) + ": a token must be non-empty, without"
                        + " whitespace: \"" + t + "\"");
            if (ids.putIfAbsent(t, i) != null)
                throw AttnException.badInput("vocabulary line " + (i + 1) + ": duplicate token \"" + t + "\"");
            if (!t.equals(UNK) && !t.equals(BOS) && !t.equals(EOS)) upper |= !t.equals(t.toLowerCase(Locale.ROOT));
        }
        for (String s : new String[] {UNK, BOS, EOS})
            if (!ids.containsKey(s)) throw AttnException.badInput("the vocabulary has no " + s + " token");
        this.lowerCase = !upper;
        this.unk = ids.get(UNK);
        this.bos = ids.get(BOS);
        this.eos = ids.get(EOS);
    }

    /** Largest vocabulary file read (a 1M-token vocabulary of long tokens fits well below it). */
    public static final long MAX_FILE_BYTES = 64L << 20;

    /** Reads a vocabulary file (UTF-8, one token per line; a trailing empty line is ignored). */
    public static WordTokenizer read(Path file) {
        if (file == null) throw AttnException.badInput("vocabulary path is null");
        List<String> lines;
        try {
            // a pipe would block and a device (/dev/zero) never end; a vocabulary is a regular file of modest size
            if (Files.exists(file) && !Files.isRegularFile(file))
                throw AttnException.badInput(file + ": not a regular file (a directory, pipe or device): give a file");
            if (Files.exists(file) && Files.size(file) > MAX_FILE_BYTES)
                throw AttnException.badInput(file + ": vocabulary file is " + Files.size(file) + " bytes, over the "
                        + MAX_FILE_BYTES + "-byte cap");
            lines = new ArrayList<>(Files.readAllLines(file, StandardCharsets.UTF_8));
        } catch (java.nio.charset.CharacterCodingException e) {
            throw AttnException.badInput(file + ": vocabulary is not valid UTF-8");
        } catch (java.nio.file.NoSuchFileException e) {
            throw AttnException.badInput(file + ": cannot read vocabulary: file not found");
        } catch (IOException e) {
            throw AttnException.badInput("cannot read vocabulary " + file + ": " + e.getMessage());
        }
        while (!lines.isEmpty() && lines.getLast().isEmpty()) lines.removeLast();
        for (int i = 0; i < lines.size(); i++) lines.set(i, lines.get(i).strip());
        try {
            return new WordTokenizer(lines);
        } catch (AttnException e) {
            throw new AttnException(e.code(), file + ": " + e.getMessage());
        }
    }

    /** The text's words and punctuation marks, before the vocabulary lookup. */
    public List<String> split(String text) {
        if (lowerCase) text = text.toLowerCase(Locale.ROOT);
        List<String> out = new ArrayList<>();
        StringBuilder word = new StringBuilder();
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            i += Character.charCount(cp);
            boolean space = Character.isWhitespace(cp);
            boolean wordChar =
                    Character.isLetterOrDigit(cp) || cp == '_' || Character.getType(cp) == Character.NON_SPACING_MARK;
            if (wordChar) {
                word.appendCodePoint(cp);
                continue;
            }
            if (!word.isEmpty()) {
                out.add(word.toString());
                word.setLength(0);
            }
            if (!space) out.add(new String(Character.toChars(cp)));
        }
        if (!word.isEmpty()) out.add(word.toString());
        return out;
    }

    /** The ids of {@code text}'s words and punctuation marks, without special tokens. */
    public int[] encode(String text) {
        List<String> words = split(text);
        int[] out = new int[words.size()];
        for (int i = 0; i < out.length; i++) out[i] = ids.getOrDefault(words.get(i), unk);
        return out;
    }

    /**
     * {@code <bos>} followed by the ids of {@code text}: a prompt as the tutorials' models were trained on it.
     */
    public int[] encodeWithBos(String text) {
        int[] words = encode(text);
        int[] ids = new int[words.length + 1];
        ids[0] = bos;
        System.arraycopy(words, 0, ids, 1, words.length);
        return ids;
    }

    /** The text of one token. */
    public String token(int id) {
        if (id < 0 || id >= tokens.size())
            throw AttnException.badInput("token id " + id + " is outside the vocabulary of " + tokens.size());
        return tokens.get(id);
    }

    /**
     * The text of generated {@code ids}: their tokens joined by single spaces, up to (not including) the first {@code
     * <eos>}.
     */
    public String decode(int... ids) {
        StringBuilder sb = new StringBuilder();
        for (int id : ids) {
            if (id == eos) break;
            if (!sb.isEmpty()) sb.append(' ');
            sb.append(token(id));
        }
        return sb.toString();
    }

    /** The number of tokens (lines of the vocabulary file). */
    public int vocabSize() {
        return tokens.size();
    }

    /** The id of {@code <bos>}. */
    public int bos() {
        return bos;
    }

    /** The id of {@code <eos>}. */
    public int eos() {
        return eos;
    }

    /** The id of {@code <unk>}, which stands for every word outside the vocabulary. */
    public int unk() {
        return unk;
    }
}
