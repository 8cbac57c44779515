package io.attn.text;

import ai.djl.huggingface.tokenizers.Encoding;
import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import ai.djl.huggingface.tokenizers.jni.LibUtils;
import io.attn.AttnException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * A model's {@code tokenizer.json} run by the Hugging Face tokenizers library (Rust, through DJL's JNI binding, whose
 * jar carries the native library for linux-x86_64, macOS and Windows and extracts it on first use): the same token ids
 * as Python's {@code transformers}, accents, CJK, emoji and all. Padding is off (the embedder pads its batches);
 * truncation is at {@code maxLength} tokens, special tokens included.
 *
 * <p>Thread-safe (the native tokenizer is immutable once loaded); {@link #close} must not run while a call is in flight
 * (the embedder's gate sees to that).
 */
final class TextTokenizer implements AutoCloseable {
    /**
     * Which build of the native library DJL loads: on a host where it finds CUDA it asks for a {@code cuXXX} build,
     * which its jar does not carry, and then tries to download one (a GPU host offline fails: seen on the first GPU
     * run). Tokenizing runs on the CPU whatever device the model runs on, so the CPU build the jar carries is the one
     * to load, unless the user chose otherwise (environment variable or system property {@code RUST_FLAVOR}).
     */
    static final String FLAVOR = "RUST_FLAVOR";

    private static final Object NATIVE = new Object();
    private static boolean nativeLoaded;

    /**
     * Loads DJL's native library once, asking for its CPU build ({@link #FLAVOR}) unless the user chose one; the
     * property is cleared again afterwards, so nothing else in the JVM (DJL's own engines) sees a choice it did not
     * make. A load that fails throws (DJL keeps the failure and throws it on every later call).
     */
    private static void loadNative() {
        synchronized (NATIVE) {
            if (nativeLoaded) return;
            boolean ours = System.getenv(FLAVOR) == null && System.getProperty(FLAVOR) == null;
            if (ours) System.setProperty(FLAVOR, "cpu");
            try {
                LibUtils.checkStatus();
                nativeLoaded = true;
            } finally {
                if (ours) System.clearProperty(FLAVOR);
            }
        }
    }

    private final HuggingFaceTokenizer tokenizer;
    private final int maxLength;
    private final Path file;
    private HuggingFaceTokenizer whole; // the same without truncation, made on first use (left truncation)

    /**
     * One text's token ids, whether the text was cut at the maximum length, and how many leading tokens (a prompt's)
     * the pooling leaves out.
     */
    record Tokens(int[] ids, boolean truncated, int skip, int[] types) {
        Tokens(int[] ids, boolean truncated) {
            this(ids, truncated, 0, null);
        }

        Tokens(int[] ids, boolean truncated, int skip) {
            this(ids, truncated, skip, null);
        }
    }

    private TextTokenizer(HuggingFaceTokenizer tokenizer, int maxLength, Path file) {
        this.tokenizer = tokenizer;
        this.maxLength = maxLength;
        this.file = file;
    }

    static TextTokenizer load(Path file, int maxLength) {
        Map<String, String> options = Map.of(
                "padding",
                "false",
                "truncation",
                "true",
                "maxLength",
                String.valueOf(maxLength),
                // DJL caps truncation at its modelMaxLength, 512 unless told: a ModernBERT of 8192 positions was cut
                // at 512 tokens
                "modelMaxLength",
                String.valueOf(maxLength),
                "addSpecialTokens",
                "true");
        try {
            loadNative();
            return new TextTokenizer(HuggingFaceTokenizer.newInstance(file, options), maxLength, file);
        } catch (LinkageError e) {
            throw unavailable(e);
        } catch (IOException e) {
            throw AttnException.badInput(file + ": cannot read (" + e.getMessage() + ")");
        } catch (RuntimeException e) {
            String m = String.valueOf(e.getMessage());
            if (m.contains("native") || e.getCause() instanceof LinkageError) throw unavailable(e);
            throw AttnException.badInput(file + ": not a Hugging Face tokenizer.json (" + m + ")");
        }
    }

    private static AttnException unavailable(Throwable e) {
        return new AttnException(
                AttnException.Code.DEVICE_UNAVAILABLE,
                "the Hugging Face tokenizers native library cannot be loaded on " + System.getProperty("os.name") + "/"
                        + System.getProperty("os.arch") + " (" + e.getMessage() + rootCause(e)
                        + "): DJL's tokenizers jar carries it for linux-x86_64, linux-aarch64, macOS and Windows",
                e);
    }

    /** The innermost cause's message ("" when there is no cause): DJL wraps the reason a load failed. */
    private static String rootCause(Throwable e) {
        Throwable c = e;
        while (c.getCause() != null && c.getCause() != c) c = c.getCause();
        return c == e ? "" : ": " + c.getClass().getSimpleName() + ": " + c.getMessage();
    }

    int maxLength() {
        return maxLength;
    }

    /** The token ids of each text, {@code [CLS]} and {@code [SEP]} included, cut at the maximum length. */
    Tokens[] encode(List<String> texts) {
        Encoding[] enc = tokenizer.batchEncode(texts.toArray(String[]::new), true, false);
        Tokens[] out = new Tokens[enc.length];
        for (int i = 0; i < enc.length; i++) {
            long[] ids = enc[i].getIds();
            int[] a = new int[ids.length];
            for (int j = 0; j < a.length; j++) a[j] = Math.toIntExact(ids[j]);
            out[i] = new Tokens(a, enc[i].exceedMaxLength());
        }
        return out;
    }

    /**
     * The token ids of each text cut on the left, as transformers' {@code truncation_side="left"} cuts a single text:
     * the special tokens kept, the text's first tokens dropped until it fits the maximum length.
     */
    Tokens[] encodeLeft(List<String> texts) {
        Encoding[] enc = whole().batchEncode(texts.toArray(String[]::new), true, false);
        Tokens[] out = new Tokens[enc.length];
        for (int i = 0; i < enc.length; i++) {
            long[] ids = enc[i].getIds(), special = enc[i].getSpecialTokenMask();
            int n = ids.length, lead = 0, trail = 0;
            if (special.length == n) {
                while (lead < n && special[lead] != 0) lead++;
                while (trail < n - lead && special[n - 1 - trail] != 0) trail++;
            }
            int drop = Math.max(0, n - maxLength);
            int[] a = new int[n - drop];
            for (int j = 0, k = 0; j < n; j++) if (j < lead || j >= lead + drop) a[k++] = Math.toIntExact(ids[j]);
            out[i] = new Tokens(a, drop > 0);
        }
        return out;
    }

    /** The tokenizer without truncation, made on first use. */
    private synchronized HuggingFaceTokenizer whole() {
        if (whole == null) {
            try {
                whole = HuggingFaceTokenizer.newInstance(
                        file, Map.of("padding", "false", "truncation", "false", "addSpecialTokens", "true"));
            } catch (IOException e) {
                throw AttnException.badInput(file + ": cannot read (" + e.getMessage() + ")");
            }
        }
        return whole;
    }

    /**
     * Pairs cut on the left, as transformers' fast tokenizers cut a pair with {@code truncation_side="left"}: the
     * tokenizers library's longest-first split of the length left after the special tokens (the shorter text keeps all
     * of its tokens if it can, the longer one gets the rest; if both are too long each gets half, the second text the
     * odd one), each text losing its first tokens; the special tokens and token types as the untruncated pair has them.
     */
    Tokens[] encodePairsLeft(List<String> first, List<String> second) {
        HuggingFaceTokenizer w = whole();
        Encoding[] pairs = w.batchEncode(new ai.djl.util.PairList<>(first, second), true, false);
        Encoding[] a = w.batchEncode(first.toArray(String[]::new), false, false);
        Encoding[] b = w.batchEncode(second.toArray(String[]::new), false, false);
        Tokens[] out = new Tokens[pairs.length];
        for (int i = 0; i < pairs.length; i++) {
            long[] ids = pairs[i].getIds(), types = pairs[i].getTypeIds(), special = pairs[i].getSpecialTokenMask();
            int la = a[i].getIds().length, lb = b[i].getIds().length, n = ids.length;
            int budget = maxLength - (n - la - lb);
            int na = la, nb = lb;
            if (la + lb > budget) {
                // tokenizers' truncate_encodings, LongestFirst
                boolean swap = la > lb;
                int n1 = swap ? lb : la, n2;
                if (n1 > budget) n2 = n1;
                else n2 = Math.max(n1, budget - n1);
                if (n1 + n2 > budget) {
                    n1 = budget / 2;
                    n2 = n1 + budget % 2;
                }
                na = swap ? n2 : n1;
                nb = swap ? n1 : n2;
                na = Math.min(na, la);
                nb = Math.min(nb, lb);
            }
            int dropA = la - na, dropB = lb - nb;
            int[] keptIds = new int[n - dropA - dropB], keptTypes = new int[keptIds.length];
            int text = 0, k = 0; // text: how many of the pair's text tokens have been seen
            for (int j = 0; j < n; j++) {
                boolean sp = special.length == n && special[j] != 0;
                if (!sp) {
                    boolean inA = text < la;
                    int at = inA ? text : text - la;
                    text++;
                    if (inA ? at < dropA : at < dropB) continue;
                }
                keptIds[k] = Math.toIntExact(ids[j]);
                keptTypes[k++] = types.length == n ? Math.toIntExact(types[j]) : 0;
            }
            out[i] = new Tokens(keptIds, dropA + dropB > 0, 0, keptTypes);
        }
        return out;
    }

    /**
     * The token ids and token type ids of each pair {@code (first[i], second[i])} with the special tokens as the
     * tokenizer's post-processor puts them (BERT: {@code [CLS] a [SEP] b [SEP]}, types 0 then 1; XLM-R: {@code <s> a
     * </s></s> b </s>}), cut at the maximum length as transformers' {@code truncation=True} cuts a pair
     * ('longest_first': a token at a time from the longer text).
     */
    Tokens[] encodePairs(List<String> first, List<String> second) {
        ai.djl.util.PairList<String, String> pairs = new ai.djl.util.PairList<>(first, second);
        Encoding[] enc = tokenizer.batchEncode(pairs, true, false);
        Tokens[] out = new Tokens[enc.length];
        for (int i = 0; i < enc.length; i++) {
            long[] ids = enc[i].getIds(), types = enc[i].getTypeIds();
            int[] a = new int[ids.length], t = new int[ids.length];
            for (int j = 0; j < a.length; j++) {
                a[j] = Math.toIntExact(ids[j]);
                t[j] = types.length == ids.length ? Math.toIntExact(types[j]) : 0;
            }
            out[i] = new Tokens(a, enc[i].exceedMaxLength(), 0, t);
        }
        return out;
    }

    /**
     * {@link #decode} for a model's public {@code decode} (Embedder, Reranker, Classifier): the ids checked, inside the
     * model's {@code gate} (a closed model refuses).
     */
    String decode(io.attn.engine.Gate gate, int[] ids, boolean skipSpecial) {
        if (ids == null) throw AttnException.badInput("ids is null");
        for (int id : ids) if (id < 0) throw AttnException.badInput("token id " + id + " is negative");
        gate.enter();
        try {
            return decode(ids, skipSpecial);
        } finally {
            gate.exit();
        }
    }

    /** {@link #details} for a model's public {@code tokenDetails}: the texts checked, inside the model's {@code gate}. */
    List<List<Token>> details(io.attn.engine.Gate gate, List<String> texts, boolean addSpecial) {
        if (texts == null) throw AttnException.badInput("texts is null");
        for (int i = 0; i < texts.size(); i++)
            if (texts.get(i) == null) throw AttnException.badInput("text " + i + " is null");
        gate.enter();
        try {
            return details(texts, addSpecial);
        } finally {
            gate.exit();
        }
    }

    /** The text of token ids (special tokens left out when {@code skipSpecial}), as transformers' decode. */
    String decode(int[] ids, boolean skipSpecial) {
        long[] l = new long[ids.length];
        for (int i = 0; i < ids.length; i++) l[i] = ids[i];
        return tokenizer.decode(l, skipSpecial);
    }

    /** Each text's tokens with their strings, special flags and character spans (not truncated). */
    List<List<Token>> details(List<String> texts, boolean addSpecial) {
        List<List<Token>> out = new java.util.ArrayList<>(texts.size());
        for (String text : texts) {
            Encoding e = tokenizer.encode(text, addSpecial, false);
            long[] ids = e.getIds(), special = e.getSpecialTokenMask();
            String[] toks = e.getTokens();
            ai.djl.huggingface.tokenizers.jni.CharSpan[] spans = e.getCharTokenSpans();
            List<Token> l = new java.util.ArrayList<>(ids.length);
            for (int i = 0; i < ids.length; i++) {
                boolean sp = special.length == ids.length && special[i] != 0;
                var span = spans != null && i < spans.length ? spans[i] : null;
                l.add(new Token(
                        Math.toIntExact(ids[i]),
                        toks[i],
                        sp,
                        sp || span == null ? -1 : span.getStart(),
                        sp || span == null ? -1 : span.getEnd()));
            }
            out.add(List.copyOf(l));
        }
        return out;
    }

    /**
     * The tokens of {@code prompt} as sentence-transformers counts them to leave a prompt out of the pooling: its
     * tokens with the special tokens, less a trailing special token ({@code [SEP]}, {@code </s>}).
     */
    int promptLength(String prompt) {
        Encoding e = tokenizer.encode(prompt, true, false);
        long[] special = e.getSpecialTokenMask();
        int n = e.getIds().length;
        return n > 0 && special.length == n && special[n - 1] != 0 ? n - 1 : n;
    }

    /** The tokens' strings (for users who show token-level output). */
    String[] tokens(String text) {
        return tokenizer.encode(text, true, false).getTokens();
    }

    @Override
    public synchronized void close() {
        tokenizer.close();
        if (whole != null) whole.close();
    }
}
