package io.attn.engine;

/**
 * Receives each token as {@link LanguageModel#generate} produces it, in order: for streaming output. Called on the
 * thread that called {@code generate}; an exception it throws ends the generation and reaches that caller unchanged.
 */
@FunctionalInterface
public interface TokenListener {
    /**
     * @param sequence the index of the prompt the token continues
     * @param id the token id (the {@link GenerationOptions#eos() eos} id too, when a sequence produces it)
     */
    void token(int sequence, int id);
}
