package io.attn.nn;

import io.attn.io.JsonFields;
import java.util.List;

/**
 * RoBERTa, XLM-RoBERTa (multilingual-e5, bge-m3, paraphrase-multilingual) and CamemBERT: BERT's layers and weight
 * names, with positions that count from past the padding index ({@code pad_token_id + 1}, transformers'
 * {@code create_position_ids_from_input_ids}) and, usually, one token type. Defaults of transformers'
 * {@code XLMRobertaConfig} / {@code RobertaConfig} ({@code pad_token_id} 1). An {@code xlm-roberta} config with {@code
 * position_embedding_type} {@code rotary} is jina-embeddings-v3's hub folder ({@link JinaV3Family#readHub}).
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
        // jina-embeddings-v3 as its hub folder says it (its remote code's XLM-RoBERTa with rotary positions)
        if ("rotary".equals(r.string("position_embedding_type", "absolute"))) return JinaV3Family.readHub(r, modelType);
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
