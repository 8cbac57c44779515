package io.attn.nn;

import io.attn.io.JsonFields;
import java.util.List;

/**
 * RoBERTa, XLM-RoBERTa (multilingual-e5, bge-m3, paraphrase-multilingual) and CamemBERT: BERT's layers and weight
 * names, with positions that count from past the padding index ({@code pad_token_id + 1}, transformers'
 * {@code create_position_ids_from_input_ids}) and, usually, one token type. Defaults of transformers'
 * {@code XLMRobertaConfig} / {@code RobertaConfig} ({@code pad_token_id} 1).
 */
final class RobertaFamily implements EncoderFamily {
    @Override
    public List<String> modelTypes() {
        return List.of("xlm-roberta", "roberta", "camembert");
    }

    @Override
    public String checkpointPrefix() {
        return "roberta.";
    }

    @Override
    public Names names() {
        return BertFamily.NAMES;
    }

    @Override
    public EncoderConfig read(JsonFields r, String modelType) {
        BertFamily.checkAbsoluteEncoder(r);
        return BertFamily.bertKeys(
                r,
                modelType,
                30522,
                r.integer("type_vocab_size", 2),
                r.integer("pad_token_id", 1) + 1,
                0,
                BertFamily.NAMES);
    }
}
