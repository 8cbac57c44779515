package io.attn.text;

import io.attn.cuda.EmulatedCuda;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;

/**
 * Every family of {@link FamiliesTest}, whole models on the CUDA backend: its real op logic launching the engine's
 * {@code .cu} kernels compiled for the host ({@link EmulatedCuda}: flash attention, our GEMM kernel, the epilogues,
 * fp32), in ragged batches (the attention run padded between two copies) and in padded ones (a quantized model's, a
 * mean-pooling classifier's), held to the same judge and bound: the token ids and the last hidden state of every text
 * within {@value FamiliesTest#HIDDEN_BOUND} of transformers'. Says nothing about
 * cuBLAS, PTX or timing (a GPU run does). Tagged
 * {@code long} (the host build of the kernels): CI's second test run takes it.
 */
@Tag("long")
class FamiliesEmulatedCudaTest extends FamiliesTest {
    @BeforeAll
    static void open() {
        engine = EmulatedEngines.openOrSkip();
    }

    @AfterAll
    static void close() {
        if (engine != null) engine.close();
    }

    // Two forward passes per family on the emulator (its GEMM and attention kernels run one host thread per CUDA
    // thread): the token ids and last hidden states in a ragged batch (tokensAndHiddenStatesMatchTransformers,
    // inherited: the embedder's choice on this backend) and in a padded one (everyFamilyMatchesTransformersInAPadded-
    // Batch, inherited). The pooled vectors are the same hidden states through the host's pooling (FamiliesTest on the
    // CPU), and the refusals are not the backend's: these two are not tests here (overridden without @TestFactory).

    @Override
    Stream<DynamicTest> sentenceVectorsMatchSentenceTransformers() {
        return Stream.empty();
    }

    @Override
    Stream<DynamicTest> familiesNotRunYetAreNamed() {
        return Stream.empty();
    }
}
