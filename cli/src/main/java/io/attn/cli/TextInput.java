package io.attn.cli;

import io.attn.AttnException;
import io.attn.io.WordVectors;
import io.attn.tensor.Tensor;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;

/**
 * {@code --text} input: tokenised like common GloVe vocabularies (lower case, punctuation split off), looked up in a
 * word-vector file. Unknown words follow {@code --unknown}: a zero vector (default), skipped, or an error; either way
 * they are listed in one warning line.
 */
record TextInput(Tensor embeddings, List<String> tokens) {
    static TextInput embed(String text, Path vectors, String unknown) {
        if (vectors == null) throw AttnException.badInput("--text needs --vectors (a GloVe / word2vec text file)");
        WordVectors.UnknownPolicy policy;
        try {
            policy = WordVectors.UnknownPolicy.valueOf(unknown.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw AttnException.badInput("--unknown must be zero, skip or error, got " + unknown);
        }
        List<String> tokens = WordVectors.tokenize(text);
        if (tokens.isEmpty()) throw AttnException.badInput("--text has no tokens");
        WordVectors wv = WordVectors.load(vectors);
        WordVectors.Embedding e = wv.embed(tokens, policy);
        List<String> labels = new ArrayList<>(tokens);
        if (!e.unknown().isEmpty()) {
            System.err.println("attn: warning: " + e.unknown().size() + " word(s) not in " + vectors
                    + (policy == WordVectors.UnknownPolicy.SKIP ? " (skipped): " : " (zero vectors): ")
                    + String.join(", ", e.unknown()));
            if (policy == WordVectors.UnknownPolicy.SKIP) {
                HashSet<String> unk = new HashSet<>(e.unknown());
                labels.removeIf(unk::contains);
            }
        }
        if (e.tensor().dim(0) == 0) throw AttnException.badInput("--text: no token has a vector in " + vectors);
        return new TextInput(e.tensor(), labels);
    }
}
