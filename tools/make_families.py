#!/usr/bin/env python3
"""Seeded random-weight models of every transformer family attn means to run, saved the way sentence-transformers 6
saves them, with the reference outputs the Java tests hold attn to (tests/families/README.md says what each holds).

Run (from the repository root, in a venv outside the repository; no network needed beyond the local wheel indexes):

    python3 -m venv /work/venv-hf && . /work/venv-hf/bin/activate
    pip install --index-url file:///opt/pypi/simple --extra-index-url file:///opt/pypi-more/simple \\
        --find-links /opt/wheels torch transformers sentence-transformers onnx onnxruntime onnxscript tokenizers
    python3 tools/make_families.py                      # rewrites tests/families/<family>/ for every family
    python3 tools/make_families.py --only bert qwen3    # just those
    python3 tools/make_families.py --shape multilingual-e5-small --out /tmp/e5-small   # a big one, not committed
    python3 tools/make_families.py --shape modernbert-base --out /tmp/modernbert-base
    python3 tools/make_families.py --shape all-mpnet-base-v2 --out /tmp/all-mpnet-base-v2
    python3 tools/make_families.py --shape embeddinggemma-300m --out /tmp/embeddinggemma-300m
    python3 tools/make_families.py --shape jina-embeddings-v3 --out /tmp/jina-embeddings-v3   # ONNX weights in .data

Made with torch 2.13.0+cpu, transformers 5.18.0, sentence-transformers 6.0.1, tokenizers 0.23.2, onnx 1.23.1,
onnxscript 0.7.2, onnxruntime 1.30.0, numpy 2.4.6 (Python 3.11, CPU). Other versions may write other files or other
last bits; expected.json records the versions that wrote it.

Deterministic: the vocabularies come from the inline CORPUS through a tie-free trainer (bpe_train; the tokenizers
library's own trainers break ties in hash order), the weights from a torch.Generator seeded per family (SEED + the
family's index in FAMILIES), so a rerun with the same versions writes the same bytes, ONNX files included.

Each family folder holds what SentenceTransformer(modules=[Transformer, Pooling(, Normalize)]).save(dir,
create_model_card=False) writes (config.json, model.safetensors, tokenizer.json, tokenizer_config.json,
sentence_bert_config.json, modules.json, config_sentence_transformers.json, 1_Pooling/config.json, 2_Normalize/ where
the family normalizes), plus
  expected.json  texts, the token ids and attention mask the HF tokenizer gives the batch (padded on the model's
                 padding side, truncated to max_seq_length), the pooled sentence-transformers embeddings
                 (st.encode, one batch) without a prompt and with each prompt the family defines, and the checks run
  hidden.npy     float32 (texts, padded length, hidden): AutoModel's last_hidden_state for that batch, zero where the
                 attention mask is 0
  onnx/model.onnx  (xlm-roberta and modernbert) torch.onnx.export of the AutoModel, inputs input_ids and
                 attention_mask (int64, dynamic batch and sequence), output last_hidden_state
"""
import argparse
import json
import os
import shutil
import tempfile

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import numpy as np
import torch

SEED = 35
ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
OUT = os.path.join(ROOT, "tests", "families")

# The same texts for every family: plain English, accents, CJK, emoji, empty, one longer than every max_seq_length
# (and longer than ModernBERT's local window of 8), mixed scripts, one word.
TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "Café crème brûlée, über Größe, niño y señor mañana.",
    "中文文本处理和日本語のテキスト。",
    "Embeddings make search fun 🚀🙂",
    "",
    "Transformers read every token of a sentence at once, and attention lets each word look at all the others; "
    "this sentence keeps going well past the limit on tokens so that truncation has to cut it short before its "
    "end, which a careful engine must do exactly as the tokenizer does.",
    "Zürich, 東京 and 北京 — a naïve résumé!",
    "hello",
]

# Training text for the tokenizers: a few languages, so that the vocabularies hold words, pieces of words, accented
# letters and CJK characters; not every character of TEXTS is here (the emoji are not, some kanji are not), so the
# unknown token and byte fallback are exercised too.
CORPUS = [
    "The quick brown fox jumps over the lazy dog while the cat sleeps in the sun.",
    "A sentence embedding maps a text to a vector so that similar texts land near each other.",
    "Search engines rank documents by how well they match the query the user typed.",
    "Attention lets every token look at every other token of the sentence at once.",
    "Transformers stack layers of attention and feed forward networks with residual connections.",
    "The tokenizer splits words into pieces; rare words become several pieces, common words one.",
    "Truncation cuts a long text at the maximum sequence length before the model reads it.",
    "Each layer normalizes its input, mixes the tokens, and adds the result back to the stream.",
    "Hello world, hello again, and hello to everyone who reads these careful tests.",
    "Engines must compute exactly the same function of the same weights and the same tokens.",
    "Numbers such as 1, 2, 3, 10, 42, 100 and 2024 appear in texts as well.",
    "Questions? Answers! Lists: apples, pears, plums; and quotes \"like this\" or 'like that'.",
    "Le café est chaud et la crème brûlée est délicieuse à Paris en été.",
    "Où est la bibliothèque? Elle est près de l'église, à côté du musée.",
    "Über den Wolken muss die Freiheit wohl grenzenlos sein, sagt man in München.",
    "Die Größe der Straße ist schön; Zürich und Köln sind Städte mit Flüssen.",
    "El niño y la niña comen piña con el señor mañana por la mañana en España.",
    "¿Dónde está la estación? Está al lado del árbol, señora.",
    "Uma canção em português: coração, ação, não, irmã e avô.",
    "Naïve résumé, façade, coöperate, and jalapeño keep their accents in English too.",
    "中文文本处理是自然语言处理的一部分。",
    "我们在北京学习中文，今天天气很好。",
    "机器学习模型把句子变成向量。",
    "日本語のテキストを処理します。東京は大きな都市です。",
    "これは日本語の文章です。ひらがなとカタカナとかんじ。",
    "テキスト検索とベクトルの類似度。",
    "한국어 문장도 조금 있습니다.",
    "Русский текст тоже встречается в корпусе.",
    "Ελληνικά γράμματα: άλφα, βήτα, γάμμα.",
    "search query: how do transformers work; search document: attention is all you need.",
    "query: what is the capital of France? passage: Paris is the capital of France.",
    "Instruct: Given a web search query, retrieve relevant passages that answer the query",
]


# ----------------------------------------------------------------------------------------------------------- tokenizers
# The tokenizers library's WordPiece and BPE trainers break ties between equally frequent pairs in hash order, so two
# runs give two vocabularies; its Unigram trainer keeps the same pieces but scores that differ in the last bits. For
# bytes that do not change between runs, the BPE-style vocabularies come from bpe_train below (most frequent pair
# first, ties to the smallest pair), with the words cut by the family's own normalizer and pre-tokenizer from the
# tokenizers library, and the Unigram scores are rounded. Each vocabulary is then handed to the family's tokenizer
# class from transformers, which builds the family's pipeline, and save_pretrained writes tokenizer.json.

def bpe_train(word_counts, n_merges, prefix=""):
    """word_counts: {tuple of symbols: count}. Returns the merges, in order; with a prefix (WordPiece's "##") every
    symbol but a word's first carries it, and a merge drops the right side's."""
    from collections import Counter
    words = dict(word_counts)
    merges = []
    for _ in range(n_merges):
        pairs = Counter()
        for w, c in words.items():
            for pair in zip(w, w[1:]):
                pairs[pair] += c
        if not pairs:
            break
        (a, b), _ = min(pairs.items(), key=lambda kv: (-kv[1], kv[0]))
        merged = a + b[len(prefix):]
        merges.append((a, b))
        new = {}
        for w, c in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                    out.append(merged)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            new[tuple(out)] = new.get(tuple(out), 0) + c
        words = new
    return merges


def _words(normalizer, pre_tokenizer):
    from collections import Counter
    counts = Counter()
    for text in CORPUS:
        if normalizer is not None:
            text = normalizer.normalize_str(text)
        counts.update(w for w, _ in pre_tokenizer.pre_tokenize_str(text))
    return counts


def _vocab_from_merges(base, merges, size, prefix=""):
    vocab = {}
    for t in base:
        vocab.setdefault(t, len(vocab))
    kept = []
    for a, b in merges:
        if len(vocab) >= size:
            break
        vocab.setdefault(a + b[len(prefix):], len(vocab))
        kept.append((a, b))
    return vocab, kept


def _bert_wordpiece_vocab(vocab_size, specials):
    from tokenizers import normalizers, pre_tokenizers

    counts = _words(normalizers.BertNormalizer(lowercase=True, strip_accents=None, handle_chinese_chars=True),
                    pre_tokenizers.BertPreTokenizer())
    words = {tuple([w[0]] + ["##" + c for c in w[1:]]): n for w, n in sorted(counts.items())}
    alphabet = sorted({s for w in words for s in w})
    vocab, _ = _vocab_from_merges(specials + alphabet, bpe_train(words, vocab_size, "##"), vocab_size, "##")
    return vocab


def tok_bert(msl):
    from transformers import BertTokenizer

    vocab = _bert_wordpiece_vocab(600, ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    return BertTokenizer(vocab=vocab, model_max_length=msl)


def tok_distilbert(msl):
    from transformers import DistilBertTokenizer

    vocab = _bert_wordpiece_vocab(600, ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    return DistilBertTokenizer(vocab=vocab, model_max_length=msl)


def tok_mpnet(msl):
    # all-mpnet-base-v2's vocab starts <s> <pad> </s> <unk>, ends with <mask>; words are BERT-style WordPiece
    from transformers import MPNetTokenizer

    vocab = _bert_wordpiece_vocab(600, ["<s>", "<pad>", "</s>", "[UNK]"])
    vocab["<mask>"] = len(vocab)
    return MPNetTokenizer(vocab=vocab, model_max_length=msl, unk_token="[UNK]")


def _unigram_vocab(vocab_size):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(),
                                                 pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")])
    tok.train_from_iterator(CORPUS, trainers.UnigramTrainer(
        vocab_size=vocab_size, special_tokens=["<s>", "<pad>", "</s>", "<unk>"], unk_token="<unk>",
        show_progress=False))
    pieces = json.loads(tok.to_str())["model"]["vocab"]
    head, rest = pieces[:4], pieces[4:]
    assert [p for p, _ in head] == ["<s>", "<pad>", "</s>", "<unk>"], head
    # the trainer's last bits and its scores for the single characters it must keep vary from run to run (by about
    # 1e-3): scores to one decimal, pieces ordered by score then text
    rest = sorted(((p, round(s, 1)) for p, s in rest), key=lambda ps: (-ps[1], ps[0]))
    return [(p, 0.0) for p, _ in head] + rest + [("<mask>", 0.0)]  # XLM-R: <s> <pad> </s> <unk> ... <mask> last


def tok_xlmr(msl):
    from transformers import XLMRobertaTokenizer

    return XLMRobertaTokenizer(vocab=_unigram_vocab(700), model_max_length=msl)


QWEN_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
              r"|\s+(?!\S)|\s+")
LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")


def _byte_chars():
    """GPT-2's bytes_to_unicode, in byte order: the 256 symbols a byte-level BPE starts from."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), 256))
    out, n = {}, 0
    for b in range(256):
        if b in keep:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + n)
            n += 1
    return [out[b] for b in range(256)]


def _bytelevel_bpe(vocab_size, regex, normalizer=None):
    """A byte-level BPE over the words of a GPT-style split regex (None: ByteLevel's own): (vocab, merges)."""
    from tokenizers import Regex, pre_tokenizers

    if regex is None:
        pre = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    else:
        pre = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(regex), behavior="isolated", invert=False),
                                       pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    words = {tuple(w): n for w, n in sorted(_words(normalizer, pre).items())}
    base = _byte_chars()
    return _vocab_from_merges(base, bpe_train(words, vocab_size), vocab_size)


def tok_modernbert(msl):
    # ModernBERT: an OLMo-style byte-level BPE behind PreTrainedTokenizerFast, [CLS] $A [SEP], specials after the words
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab, merges = _bytelevel_bpe(700, None)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    specials = ["|||IP_ADDRESS|||", "<|padding|>", "[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
    tok.add_special_tokens(specials)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS]:0 $A:0 [SEP]:0", pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=msl, unk_token="[UNK]", cls_token="[CLS]",
                                   sep_token="[SEP]", pad_token="[PAD]", mask_token="[MASK]")


def _eos_post_processor(tokenizer, eos, bos=None):
    from tokenizers import processors

    ids = [(eos, tokenizer.convert_tokens_to_ids(eos))]
    head = ""
    if bos is not None:
        ids.append((bos, tokenizer.convert_tokens_to_ids(bos)))
        head = bos + ":0 "
    tokenizer.backend_tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{head}$A:0 {eos}:0", pair=f"{head}$A:0 {eos}:0 $B:1 {eos}:1", special_tokens=ids)


def tok_qwen(msl):
    # Qwen2/Qwen3: Qwen2Tokenizer (NFC, Qwen's split regex, byte-level BPE); <|endoftext|> is eos and pad. As in
    # Qwen3-Embedding's tokenizer.json, a TemplateProcessing post-processor appends <|endoftext|> to every text, and
    # tokenizer_config.json pads on the left.
    from tokenizers import normalizers
    from transformers import Qwen2Tokenizer

    vocab, merges = _bytelevel_bpe(700, QWEN_REGEX, normalizers.NFC())
    t = Qwen2Tokenizer(vocab=vocab, merges=merges, model_max_length=msl, padding_side="left")
    t.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>"]})
    _eos_post_processor(t, "<|endoftext|>")
    return t


def tok_llama(msl):
    # Llama 3: byte-level BPE behind PreTrainedTokenizerFast, bos <|begin_of_text|>; here also eos <|end_of_text|>
    # appended (as an embedder's post-processor would) and used as pad, padded on the left
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab, merges = _bytelevel_bpe(700, LLAMA3_REGEX)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_REGEX), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(["<|begin_of_text|>", "<|end_of_text|>"])
    t = PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=msl, bos_token="<|begin_of_text|>",
                                eos_token="<|end_of_text|>", pad_token="<|end_of_text|>", padding_side="left")
    _eos_post_processor(t, "<|end_of_text|>", bos="<|begin_of_text|>")
    return t


def tok_mistral(msl):
    # Mistral 7B / e5-mistral: LlamaTokenizer (SentencePiece-style BPE: Metaspace, byte fallback <0x00>..<0xFF>),
    # <unk>=0 <s>=1 </s>=2; add_bos_token and add_eos_token both on, </s> also the pad, padded on the left
    from tokenizers import pre_tokenizers
    from transformers import LlamaTokenizer

    pre = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=True)
    words = {tuple(w): n for w, n in sorted(_words(None, pre).items())}
    base = ["<unk>", "<s>", "</s>"] + [f"<0x{i:02X}>" for i in range(256)] + sorted({c for w in words for c in w})
    vocab, merges = _vocab_from_merges(base, bpe_train(words, 700), 700)
    return LlamaTokenizer(vocab=vocab, merges=merges, model_max_length=msl, add_bos_token=True,
                          add_eos_token=True, pad_token="</s>", padding_side="left")


def tok_gemma(msl):
    # Gemma 3 / EmbeddingGemma: GemmaTokenizer (spaces replaced by "▁", BPE with byte fallback <0x00>..<0xFF>),
    # <pad>=0 <eos>=1 <bos>=2 <unk>=3 <mask>=4; as EmbeddingGemma's tokenizer.json, <bos> before and <eos> after every
    # text; padded on the right
    from tokenizers import normalizers, pre_tokenizers
    from transformers import GemmaTokenizer

    pre = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="never", split=True)
    words = {tuple(w): n for w, n in sorted(_words(None, pre).items())}
    base = ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>"] + [f"<0x{i:02X}>" for i in range(256)]
    base += sorted({c for w in words for c in w})
    vocab, merges = _vocab_from_merges(base, bpe_train(words, 700), 700)
    t = GemmaTokenizer(vocab=vocab, merges=merges, model_max_length=msl, padding_side="right")
    _eos_post_processor(t, "<eos>", bos="<bos>")
    return t

# ------------------------------------------------------------------------------------------------------------- families
# name: model_type, tokenizer, config factory (given the tokenizer), pooling, normalize, max_seq_length, prompts.
# Hidden sizes 32-48, 2 layers, 4 heads; decoders use fewer key/value heads than query heads (GQA/MQA).

def cfg_bert(t):
    from transformers import BertConfig
    return BertConfig(vocab_size=len(t), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                      intermediate_size=64, max_position_embeddings=64, type_vocab_size=2,
                      pad_token_id=t.pad_token_id)


def cfg_distilbert(t):
    from transformers import DistilBertConfig
    return DistilBertConfig(vocab_size=len(t), dim=32, n_layers=2, n_heads=4, hidden_dim=64,
                            max_position_embeddings=64, pad_token_id=t.pad_token_id)


def cfg_mpnet(t):
    from transformers import MPNetConfig
    return MPNetConfig(vocab_size=len(t), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                       intermediate_size=64, max_position_embeddings=64, relative_attention_num_buckets=32,
                       pad_token_id=t.pad_token_id, bos_token_id=t.bos_token_id, eos_token_id=t.eos_token_id)


def cfg_xlmr(t):
    from transformers import XLMRobertaConfig
    return XLMRobertaConfig(vocab_size=len(t), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                            intermediate_size=64, max_position_embeddings=64, type_vocab_size=1,
                            pad_token_id=t.pad_token_id, bos_token_id=t.bos_token_id, eos_token_id=t.eos_token_id)


def cfg_modernbert(t):
    from transformers import ModernBertConfig
    return ModernBertConfig(vocab_size=len(t), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                            intermediate_size=48, max_position_embeddings=64, local_attention=8,
                            global_attn_every_n_layers=2, pad_token_id=t.pad_token_id, cls_token_id=t.cls_token_id,
                            sep_token_id=t.sep_token_id, bos_token_id=t.cls_token_id, eos_token_id=t.sep_token_id)


def cfg_nomic(t):
    from transformers import NomicBertConfig
    return NomicBertConfig(vocab_size=len(t), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                           intermediate_size=64, max_position_embeddings=64, type_vocab_size=2,
                           pad_token_id=t.pad_token_id)


def cfg_gte(t):
    from transformers import GteConfig
    return GteConfig(vocab_size=len(t), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=64, max_position_embeddings=64, type_vocab_size=1, pad_token_id=t.pad_token_id)


def cfg_jina_v3(t):
    from transformers import JinaEmbeddingsV3Config
    return JinaEmbeddingsV3Config(vocab_size=len(t), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                  intermediate_size=64, max_position_embeddings=64, type_vocab_size=1,
                                  pad_token_id=t.pad_token_id, bos_token_id=t.bos_token_id,
                                  eos_token_id=t.eos_token_id)


def cfg_qwen3(t):
    from transformers import Qwen3Config
    # head_dim 16 with 4 heads: 64 != hidden 48, as Qwen3's head_dim is not hidden / heads either
    return Qwen3Config(vocab_size=len(t), hidden_size=48, num_hidden_layers=2, num_attention_heads=4,
                       num_key_value_heads=2, head_dim=16, intermediate_size=96, max_position_embeddings=128,
                       rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
                       tie_word_embeddings=True, pad_token_id=t.pad_token_id, eos_token_id=t.eos_token_id,
                       bos_token_id=None)


def cfg_qwen2(t):
    from transformers import Qwen2Config
    return Qwen2Config(vocab_size=len(t), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                       num_key_value_heads=2, intermediate_size=64, max_position_embeddings=128,
                       rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
                       pad_token_id=t.pad_token_id, eos_token_id=t.eos_token_id, bos_token_id=None)


def cfg_mistral(t):
    from transformers import MistralConfig
    # sliding_window 16 < max_seq_length 32, so the window matters for the long text
    return MistralConfig(vocab_size=len(t), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, intermediate_size=64, max_position_embeddings=128, sliding_window=16,
                         rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
                         pad_token_id=t.pad_token_id, bos_token_id=t.bos_token_id, eos_token_id=t.eos_token_id)


def cfg_llama(t):
    from transformers import LlamaConfig
    # one key/value head for 4 query heads (multi-query)
    return LlamaConfig(vocab_size=len(t), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                       num_key_value_heads=1, intermediate_size=64, max_position_embeddings=128,
                       rope_parameters={"rope_type": "default", "rope_theta": 500000.0},
                       pad_token_id=t.pad_token_id, bos_token_id=t.bos_token_id, eos_token_id=t.eos_token_id)


def cfg_llama3(t):
    from transformers import LlamaConfig
    # Llama 3.1+'s rope scaling ("llama3") at a small original context: with head_dim 8 and theta 1e4 the wavelengths
    # are 6.3 (under 64 / 8: kept), 62.8 (between: blended), 628 and 6283 (over 64 / 1: divided by 8)
    return LlamaConfig(vocab_size=len(t), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                       num_key_value_heads=2, intermediate_size=64, max_position_embeddings=128,
                       rope_parameters={"rope_type": "llama3", "rope_theta": 10000.0, "factor": 8.0,
                                        "low_freq_factor": 1.0, "high_freq_factor": 8.0,
                                        "original_max_position_embeddings": 64},
                       pad_token_id=t.pad_token_id, bos_token_id=t.bos_token_id, eos_token_id=t.eos_token_id)


def cfg_qwen3_window(t):
    from transformers import Qwen3Config
    # Qwen's per-layer sliding window: use_sliding_window with max_window_layers 1 of 2 layers (layer 0 full, layer 1
    # keys i - 8 < j <= i); transformers saves it as layer_types
    return Qwen3Config(vocab_size=len(t), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                       num_key_value_heads=2, head_dim=8, intermediate_size=64, max_position_embeddings=128,
                       use_sliding_window=True, sliding_window=8, max_window_layers=1,
                       rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
                       pad_token_id=t.pad_token_id, eos_token_id=t.eos_token_id, bos_token_id=None)


def cfg_gemma3(t):
    from transformers import Gemma3TextConfig
    # EmbeddingGemma's shape, small: bidirectional attention (use_bidirectional_attention), 3 heads of 32 over 1
    # key/value head (head_dim 32 != hidden 48 / 3), query_pre_attn_scalar 24 (not head_dim), sliding_window 10
    # (|i - j| <= 5) in the sliding layers, a full layer between them; local theta 1e4, global 1e6 with linear
    # scaling 2 (Gemma 3's larger models scale the global layers' rope)
    return Gemma3TextConfig(vocab_size=len(t), hidden_size=48, num_hidden_layers=3, num_attention_heads=3,
                            num_key_value_heads=1, head_dim=32, intermediate_size=96, max_position_embeddings=128,
                            query_pre_attn_scalar=24, sliding_window=10, use_bidirectional_attention=True,
                            layer_types=["sliding_attention", "full_attention", "sliding_attention"],
                            rope_parameters={
                                "full_attention": {"rope_type": "linear", "factor": 2.0, "rope_theta": 1000000.0},
                                "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}},
                            hidden_activation="gelu_pytorch_tanh", pad_token_id=t.pad_token_id,
                            bos_token_id=t.bos_token_id, eos_token_id=t.eos_token_id)


QWEN3_QUERY = "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:"

# jina-embeddings-v3's config_sentence_transformers.json prompts (one per LoRA task; the last three empty)
JINA_V3_PROMPTS = {"retrieval.query": "Represent the query for retrieving evidence documents: ",
                   "retrieval.passage": "Represent the document for retrieval: ", "separation": "",
                   "classification": "", "text-matching": ""}

FAMILIES = {
    # the plain BERT case, but in sentence-transformers 6's file formats (what attn refused before issue 35)
    "bert": dict(model_type="bert", tok=tok_bert, cfg=cfg_bert, pooling="mean", normalize=True, msl=24),
    # multilingual-e5 style: Unigram + Metaspace, e5 prompts with a default prompt, ONNX export
    "xlm-roberta": dict(model_type="xlm-roberta", tok=tok_xlmr, cfg=cfg_xlmr, pooling="mean", normalize=True,
                        msl=32, prompts={"query": "query: ", "passage": "passage: "}, default_prompt_name="query",
                        onnx=True),
    # msmarco-distilbert-tas-b style: CLS pooling, no normalization
    "distilbert": dict(model_type="distilbert", tok=tok_distilbert, cfg=cfg_distilbert, pooling="cls",
                       normalize=False, msl=24),
    # all-mpnet-base-v2 style (relative position buckets)
    "mpnet": dict(model_type="mpnet", tok=tok_mpnet, cfg=cfg_mpnet, pooling="mean", normalize=True, msl=24),
    # modernbert-embed style: local window 8 every other layer, ONNX export
    "modernbert": dict(model_type="modernbert", tok=tok_modernbert, cfg=cfg_modernbert, pooling="mean",
                       normalize=True, msl=32, window=("local_attention", 1024), onnx=True,
                       prompts={"query": "search_query: ", "document": "search_document: "}),
    # nomic-embed-text style prompts, but with include_prompt false (the prompt's tokens left out of the mean)
    "nomic_bert": dict(model_type="nomic_bert", tok=tok_bert, cfg=cfg_nomic, pooling="mean", normalize=False,
                       msl=24, include_prompt=False,
                       prompts={"query": "search_query: ", "document": "search_document: "}),
    # gte-multilingual-base style (transformers' native "gte"; the hub's remote-code model_type is "new")
    "gte": dict(model_type="gte", tok=tok_xlmr, cfg=cfg_gte, pooling="cls", normalize=True, msl=32),
    # Qwen3-Embedding style: left padding, eos appended, last-token pooling, q/k norm, GQA, instruct prompt
    "qwen3": dict(model_type="qwen3", tok=tok_qwen, cfg=cfg_qwen3, pooling="lasttoken", normalize=True, msl=48,
                  prompts={"query": QWEN3_QUERY, "document": ""}),
    # gte-Qwen2 style (q/k/v biases)
    "qwen2": dict(model_type="qwen2", tok=tok_qwen, cfg=cfg_qwen2, pooling="lasttoken", normalize=True, msl=32),
    # e5-mistral style (sliding window 16)
    "mistral": dict(model_type="mistral", tok=tok_mistral, cfg=cfg_mistral, pooling="lasttoken", normalize=True,
                    msl=32, window=("sliding_window", 1024)),
    # Llama 3 style tokenizer, multi-query attention, no normalization
    "llama": dict(model_type="llama", tok=tok_llama, cfg=cfg_llama, pooling="lasttoken", normalize=False, msl=32),
    # Llama 3.1+ style rope scaling (rope_type llama3); last so the other families keep their seeds
    "llama3": dict(model_type="llama", tok=tok_llama, cfg=cfg_llama3, pooling="lasttoken", normalize=True, msl=32),
    # Qwen's per-layer sliding window (layer 1 of 2; most texts are longer than the window of 8)
    "qwen3-window": dict(model_type="qwen3", tok=tok_qwen, cfg=cfg_qwen3_window, pooling="lasttoken", normalize=True,
                         msl=32, window=("sliding_window", 1024)),
    # sentence-transformers Dense modules after the pooling: LaBSE style (CLS, Dense with bias and tanh), then a
    # stella style projection to fewer dimensions (no bias, no activation) with use_residual (a projected residual)
    "bert-dense": dict(model_type="bert", tok=tok_bert, cfg=cfg_bert, pooling="cls", normalize=True, msl=24,
                       dense=[dict(out=24, bias=True, act="tanh"), dict(out=16, bias=False, act=None, residual=True)]),
    # EmbeddingGemma style: a bidirectional Gemma 3 (sandwich norms, (1 + w) RMSNorms, scaled embeddings), mean
    # pooling, two Dense projections without bias or activation (768 -> 3072 -> 768 there), EmbeddingGemma's prompts
    "gemma3": dict(model_type="gemma3_text", tok=tok_gemma, cfg=cfg_gemma3, pooling="mean", normalize=True, msl=32,
                   window=("sliding_window", 1024),
                   dense=[dict(out=96, bias=False, act=None), dict(out=48, bias=False, act=None)],
                   prompts={"query": "task: search result | query: ", "document": "title: none | text: "}),
    # jina-embeddings-v3 style (transformers' native jina_embeddings_v3): XLM-R's tokenizer and post-norm layers with
    # rotary positions (theta 20000), fused Wqkv as save_pretrained writes it, mean pooling, its task prompts
    "jina-v3": dict(model_type="jina_embeddings_v3", tok=tok_xlmr, cfg=cfg_jina_v3, pooling="mean", normalize=True,
                    msl=32, prompts=JINA_V3_PROMPTS),
}


# -------------------------------------------------------------------------------------------------------------- weights

def randomize(model, seed):
    """Seeded weights that keep every activation near unit scale and attention far from uniform: matrices
    N(0, 1/fan_in), embeddings N(0, 1), norm weights 1 + N(0, 0.1), biases N(0, 0.05); MPNet's relative position bias
    N(0, 0.5). Tied parameters are drawn once (named_parameters lists each tensor once)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.ndim == 1:
                if "norm" in name.lower() and name.endswith("weight"):
                    v = 1.0 + 0.1 * torch.randn(p.shape, generator=g)
                else:
                    v = 0.05 * torch.randn(p.shape, generator=g)
            elif "relative_attention_bias" in name:
                v = 0.5 * torch.randn(p.shape, generator=g)
            elif "embed" in name:
                v = torch.randn(p.shape, generator=g)
            else:
                v = torch.randn(p.shape, generator=g) / float(np.sqrt(p.shape[-1]))
            p.copy_(v.to(p.dtype))


def versions():
    import onnxruntime
    import sentence_transformers
    import tokenizers
    import transformers
    return {"torch": torch.__version__, "transformers": transformers.__version__,
            "sentence_transformers": sentence_transformers.__version__, "tokenizers": tokenizers.__version__,
            "numpy": np.__version__, "onnxruntime": onnxruntime.__version__}


def build(spec, tokenizer, config, seed, out_dir):
    """Random model + tokenizer -> sentence-transformers 6 folder at out_dir (replaced)."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Dense, Normalize, Transformer
    from sentence_transformers.sentence_transformer.modules import Pooling
    from transformers import AutoModel

    torch.manual_seed(seed)
    model = AutoModel.from_config(config)
    randomize(model, seed)
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        tr = Transformer(tmp, max_seq_length=spec["msl"])
        mods = [tr, Pooling(embedding_dimension=config.hidden_size, pooling_mode=spec["pooling"],
                            include_prompt=spec.get("include_prompt", True))]
        width = config.hidden_size
        g = torch.Generator().manual_seed(seed + 500)
        for d in spec.get("dense", []):
            # weights N(0, 1/fan_in) and biases N(0, 0.05), as the transformer's (tanh stays off its flat tails)
            act = torch.nn.Tanh() if d["act"] == "tanh" else None
            dense = Dense(width, d["out"], bias=d["bias"], activation_function=act,
                          use_residual=d.get("residual", False),
                          init_weight=torch.randn(d["out"], width, generator=g) / float(np.sqrt(width)),
                          init_bias=0.05 * torch.randn(d["out"], generator=g) if d["bias"] else None)
            if d.get("residual") and width != d["out"]:
                with torch.no_grad():
                    dense.residual.weight.copy_(torch.randn(d["out"], width, generator=g) / float(np.sqrt(width)))
            mods.append(dense)
            width = d["out"]
        if spec["normalize"]:
            mods.append(Normalize())
        st = SentenceTransformer(modules=mods, prompts=spec.get("prompts"),
                                 default_prompt_name=spec.get("default_prompt_name"))
        if os.path.exists(out_dir):
            shutil.rmtree(out_dir)
        st.save(out_dir, create_model_card=False)


# ------------------------------------------------------------------------------------------------------------- expected

def model_inputs(model, feats):
    import inspect
    params = set(inspect.signature(model.forward).parameters)
    return {k: v for k, v in feats.items() if k in params and isinstance(v, torch.Tensor)}


def max_valid_diff(a, b, mask):
    m = mask.bool().unsqueeze(-1).expand_as(a)
    return float((a.double() - b.double()).abs()[m].max()) if m.any() else 0.0


def reference(dir_, spec, name, check_onnx=None):
    """Loads the saved folder the way users do and computes everything expected.json holds."""
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer
    from transformers import AutoModel, AutoTokenizer

    st = SentenceTransformer(dir_, device="cpu")
    st.eval()
    msl = st.max_seq_length
    assert msl == spec["msl"], (msl, spec["msl"])
    tok = AutoTokenizer.from_pretrained(dir_)
    batch = tok(TEXTS, padding=True, truncation=True, max_length=msl, return_tensors="pt")
    feats = st.preprocess(TEXTS)
    for k in batch:
        assert torch.equal(batch[k], feats[k]), f"{name}: AutoTokenizer and sentence-transformers differ on {k}"

    # the Java side reads tokenizer.json with HF tokenizers: it must give the same ids as AutoTokenizer
    raw = Tokenizer.from_file(os.path.join(dir_, "tokenizer.json"))
    for text in TEXTS:
        full = tok(text)["input_ids"]
        assert raw.encode(text).ids == full, f"{name}: tokenizer.json and AutoTokenizer differ on {text!r}"
    raw.enable_truncation(max_length=msl)
    for i, text in enumerate(TEXTS):
        ids = [x for x, m in zip(batch["input_ids"][i].tolist(), batch["attention_mask"][i].tolist()) if m]
        assert raw.encode(text).ids == ids, f"{name}: truncated tokenizer.json ids differ on {text!r}"
    lengths = batch["attention_mask"].sum(1).tolist()
    assert max(lengths) == msl, f"{name}: nothing was truncated"

    model = AutoModel.from_pretrained(dir_)
    model.eval()
    mask = batch["attention_mask"]
    with torch.no_grad():
        hidden = model(**model_inputs(model, batch)).last_hidden_state.float()
        checks = {"attn_implementation": model.config._attn_implementation}
        # float32 noise floor: the same model in float64
        m64 = AutoModel.from_pretrained(dir_, dtype=torch.float64)
        m64.eval()
        h64 = m64(**model_inputs(m64, batch)).last_hidden_state
        checks["hidden_fp32_vs_fp64_max_abs"] = max_valid_diff(hidden, h64, mask)
        me = AutoModel.from_pretrained(dir_, attn_implementation="eager")
        me.eval()
        he = me(**model_inputs(me, batch)).last_hidden_state
        checks["hidden_sdpa_vs_eager_max_abs"] = max_valid_diff(hidden, he, mask)
        # each text alone (no padding) against its rows of the batch (left-padded decoders shift RoPE positions)
        worst = 0.0
        for i, text in enumerate(TEXTS):
            one = tok([text], truncation=True, max_length=msl, return_tensors="pt")
            h1 = model(**model_inputs(model, one)).last_hidden_state[0]
            rows = hidden[i][mask[i].bool()]
            worst = max(worst, float((h1.double() - rows.double()).abs().max()))
        checks["hidden_single_vs_batch_max_abs"] = worst
        if "window" in spec:
            # the same weights with the window opened wide: the fixture must differ, or it tests no window
            key, wide = spec["window"]
            mw = AutoModel.from_pretrained(dir_, **{key: wide})
            mw.eval()
            hw = mw(**model_inputs(mw, batch)).last_hidden_state
            checks[f"hidden_vs_{key}_{wide}_max_abs"] = max_valid_diff(hidden, hw, mask)
            assert checks[f"hidden_vs_{key}_{wide}_max_abs"] > 1e-2, f"{name}: the window changes nothing"

    hidden_np = (hidden * mask.unsqueeze(-1).to(hidden.dtype)).numpy().astype(np.float32)

    encodings = []
    prompts = {k: v for k, v in st.prompts.items() if v}
    runs = [("none", "")] + [(k, v) for k, v in sorted(prompts.items())]
    for pname, prompt in runs:
        emb = st.encode(TEXTS, prompt=prompt, batch_size=len(TEXTS), convert_to_numpy=True)
        f = st.preprocess(TEXTS, prompt=prompt or None)
        entry = {"prompt_name": None if pname == "none" else pname, "prompt": prompt or None,
                 "prompt_length": f.get("prompt_length"), "embeddings": emb.astype(np.float32).tolist()}
        if prompt:
            entry["input_ids"] = f["input_ids"].tolist()
            entry["attention_mask"] = f["attention_mask"].tolist()
            # the recipe the Java side follows: prompt + text, tokenize, run, pool; without the prompt's
            # prompt_length leading positions when include_prompt is false (right padding: they are the first ones)
            with torch.no_grad():
                hp = model(**model_inputs(model, f)).last_hidden_state.double()
            pmask = f["attention_mask"].clone()
            if not spec.get("include_prompt", True):
                assert tok.padding_side == "right"
                pmask[:, :f["prompt_length"]] = 0
            pp = dense_by_hand(st, pool(hp, pmask, spec["pooling"]))
            if spec["normalize"]:
                pp = pp / pp.norm(dim=-1, keepdim=True).clamp_min(1e-12)
            checks[f"pooled_prompt_{pname}_vs_st_max_abs"] = float((pp - torch.from_numpy(emb).double()).abs().max())
            assert checks[f"pooled_prompt_{pname}_vs_st_max_abs"] < 1e-5, (name, pname)
        encodings.append(entry)
    default = st.encode(TEXTS, batch_size=len(TEXTS), convert_to_numpy=True)
    default_name = st.default_prompt_name
    # pooling the AutoModel hidden states by hand must give sentence-transformers' embeddings (no prompt)
    pooled = dense_by_hand(st, pool(hidden.double(), mask, spec["pooling"]))
    if spec["normalize"]:
        pooled = pooled / pooled.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    checks["pooled_hidden_vs_st_max_abs"] = float((pooled - torch.tensor(encodings[0]["embeddings"]).double())
                                                  .abs().max())
    assert checks["pooled_hidden_vs_st_max_abs"] < 1e-5, name

    out = {
        "family": name,
        "model_type": spec["model_type"],
        "versions": versions(),
        "seed": None,
        "settings": {
            "pooling_mode": spec["pooling"], "normalize": spec["normalize"], "max_seq_length": msl,
            "hidden_size": int(hidden.shape[-1]), "vocab_size": len(tok),
            "padding_side": tok.padding_side, "include_prompt": spec.get("include_prompt", True),
            "dense": spec.get("dense", []), "dimension": len(encodings[0]["embeddings"][0]),
            "prompts": st.prompts, "default_prompt_name": default_name,
        },
        "texts": TEXTS,
        "tokens": {k: v.tolist() for k, v in batch.items()},
        "hidden": {"file": "hidden.npy", "dtype": "float32", "shape": list(hidden_np.shape),
                   "what": "AutoModel last_hidden_state for tokens, zero where attention_mask is 0"},
        "encodings": encodings,
        # what st.encode(texts) gives: the encodings entry of the default prompt (of no prompt without one)
        "default_encoding_prompt_name": default_name,
        "checks": checks,
    }
    same = [e for e in encodings if e["prompt_name"] == default_name]
    assert len(same) == 1 and np.array_equal(default, np.array(same[0]["embeddings"], dtype=np.float32))
    return out, hidden_np, model, batch, hidden


def dense_by_hand(st, v):
    """The model's Dense modules (after the pooling) applied in float64 from their own weights: act(W v + b), plus v
    or R v with use_residual."""
    from sentence_transformers.base.modules import Dense
    for m in st:
        if isinstance(m, Dense):
            y = v @ m.linear.weight.double().T
            if m.linear.bias is not None:
                y = y + m.linear.bias.double()
            y = m.activation_function(y)
            if m.use_residual:
                y = y + (v if m.in_features == m.out_features else v @ m.residual.weight.double().T)
            v = y
    return v


def pool(h, mask, mode):
    m = mask.to(h.dtype).unsqueeze(-1)
    if mode == "mean":
        return (h * m).sum(1) / m.sum(1).clamp_min(1e-9)
    if mode == "cls":
        return h[torch.arange(h.shape[0]), mask.int().argmax(1)]
    if mode == "lasttoken":
        L = mask.shape[1]
        last = L - 1 - mask.flip(1).int().argmax(1)
        return h[torch.arange(h.shape[0]), last]
    raise ValueError(mode)


# ----------------------------------------------------------------------------------------------------------------- onnx

def export_onnx(model, path, sample, external=False):
    """torch.onnx.export (dynamo) of AutoModel: input_ids, attention_mask -> last_hidden_state, dynamic batch/seq.
    `external`: the weights in model.onnx.data beside it (a model over protobuf's 2 GB)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)

    class Wrap(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask):
            return self.m(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    w = Wrap(model).eval()
    batch = torch.export.Dim("batch")
    seq = torch.export.Dim("sequence")
    args = (sample["input_ids"], sample["attention_mask"])
    with torch.no_grad():
        torch.onnx.export(w, args, path, input_names=["input_ids", "attention_mask"],
                          output_names=["last_hidden_state"], dynamo=True, external_data=external,
                          dynamic_shapes={"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq}},
                          verbose=False, report=False)
    # the exporter annotates every node with torch's names and class paths (over a third of a small file); drop them
    import onnx
    m = onnx.load(path, load_external_data=not external)
    for node in m.graph.node:
        del node.metadata_props[:]
        node.doc_string = ""
    for v in list(m.graph.input) + list(m.graph.output):
        del v.metadata_props[:]
    if external:  # the graph alone rewritten; its initializers stay in the .data file they point at
        onnx.save(m, path)
        onnx.checker.check_model(path)
    else:
        onnx.checker.check_model(m)
        onnx.save(m, path)


def onnx_diff(path, batch, hidden):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    out = sess.run(["last_hidden_state"], {"input_ids": batch["input_ids"].numpy().astype(np.int64),
                                           "attention_mask": batch["attention_mask"].numpy().astype(np.int64)})[0]
    return max_valid_diff(torch.from_numpy(out), hidden, batch["attention_mask"])


# ----------------------------------------------------------------------------------------------------------------- main

def make_family(name, idx):
    spec = FAMILIES[name]
    seed = SEED + idx
    tokenizer = spec["tok"](spec["msl"])
    config = spec["cfg"](tokenizer)
    assert config.model_type == spec["model_type"], (config.model_type, spec["model_type"])
    d = os.path.join(OUT, name)
    build(spec, tokenizer, config, seed, d)
    exp, hidden_np, model, batch, hidden = reference(d, spec, name)
    exp["seed"] = seed
    if spec.get("onnx"):
        path = os.path.join(d, "onnx", "model.onnx")
        export_onnx(model, path, batch)
        diff = onnx_diff(path, batch, hidden)
        exp["checks"]["onnx_vs_transformers_max_abs"] = diff
        exp["versions"]["onnx"] = __import__("onnx").__version__
        print(f"  {name}: onnxruntime vs transformers max abs diff {diff:.3g}")
        assert diff <= 1e-5, f"{name}: ONNX differs from transformers by {diff}"
    np.save(os.path.join(d, "hidden.npy"), hidden_np)
    with open(os.path.join(d, "expected.json"), "w", encoding="utf-8") as f:
        json.dump(exp, f, indent=1, ensure_ascii=False)
        f.write("\n")
    size = sum(os.path.getsize(os.path.join(r, x)) for r, _, fs in os.walk(d) for x in fs)
    c = exp["checks"]
    print(f"  {name}: {size // 1024} KB, vocab {len(tokenizer)}, lengths {batch['attention_mask'].sum(1).tolist()},"
          f" fp64 {c['hidden_fp32_vs_fp64_max_abs']:.2g}, eager {c['hidden_sdpa_vs_eager_max_abs']:.2g},"
          f" single {c['hidden_single_vs_batch_max_abs']:.2g}, pooled {c['pooled_hidden_vs_st_max_abs']:.2g}")


# Bigger shapes for speed comparisons (random weights, never committed). The tokenizer is the small trained one: its
# ids all lie below the model's vocab_size, which only sizes the embedding table.
SHAPES = {
    "multilingual-e5-small": dict(
        family="xlm-roberta", msl=512,
        cfg=lambda t: __import__("transformers").XLMRobertaConfig(
            vocab_size=250002, hidden_size=384, num_hidden_layers=12, num_attention_heads=12, intermediate_size=1536,
            max_position_embeddings=514, type_vocab_size=1, layer_norm_eps=1e-12, pad_token_id=t.pad_token_id,
            bos_token_id=t.bos_token_id, eos_token_id=t.eos_token_id)),
    "all-mpnet-base-v2": dict(
        family="mpnet", msl=384,
        cfg=lambda t: __import__("transformers").MPNetConfig(
            vocab_size=30527, hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
            max_position_embeddings=514, relative_attention_num_buckets=32, layer_norm_eps=1e-5,
            pad_token_id=t.pad_token_id, bos_token_id=t.bos_token_id, eos_token_id=t.eos_token_id)),
    "modernbert-base": dict(
        family="modernbert", msl=8192,
        cfg=lambda t: __import__("transformers").ModernBertConfig(
            vocab_size=50368, hidden_size=768, num_hidden_layers=22, num_attention_heads=12, intermediate_size=1152,
            max_position_embeddings=8192, local_attention=128, global_attn_every_n_layers=3, norm_eps=1e-5,
            pad_token_id=t.pad_token_id, cls_token_id=t.cls_token_id, sep_token_id=t.sep_token_id,
            bos_token_id=t.cls_token_id, eos_token_id=t.sep_token_id)),
    # EmbeddingGemma-300m's transformer (its Dense projections left out: ONNX Runtime's side of the benchmark pools only)
    # jina-embeddings-v3's transformer (its task adapters merged or not, the same shape): 24 layers, 1024 wide, rotary;
    # 570M parameters, over protobuf's 2 GB: the ONNX weights go to model.onnx.data
    "jina-embeddings-v3": dict(
        family="jina-v3", msl=8194, external=True,
        cfg=lambda t: __import__("transformers").JinaEmbeddingsV3Config(
            vocab_size=250002, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096,
            max_position_embeddings=8194, type_vocab_size=1, layer_norm_eps=1e-5, pad_token_id=t.pad_token_id,
            bos_token_id=t.bos_token_id, eos_token_id=t.eos_token_id)),
    "embeddinggemma-300m": dict(
        family="gemma3", msl=2048, spec=dict(dense=[]),
        cfg=lambda t: __import__("transformers").Gemma3TextConfig(
            vocab_size=262144, hidden_size=768, num_hidden_layers=24, num_attention_heads=3, num_key_value_heads=1,
            head_dim=256, intermediate_size=1152, max_position_embeddings=2048, query_pre_attn_scalar=256,
            sliding_window=512, use_bidirectional_attention=True, hidden_activation="gelu_pytorch_tanh",
            rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 1000000.0},
                             "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}},
            pad_token_id=t.pad_token_id, bos_token_id=t.bos_token_id, eos_token_id=t.eos_token_id)),
}


def make_shape(shape, out):
    from transformers import AutoModel, AutoTokenizer
    s = SHAPES[shape]
    spec = dict(FAMILIES[s["family"]], msl=s["msl"], **s.get("spec", {}))
    tokenizer = spec["tok"](spec["msl"])
    config = s["cfg"](tokenizer)
    out = os.path.abspath(out)
    build(spec, tokenizer, config, SEED + 1000, out)
    tok = AutoTokenizer.from_pretrained(out)
    model = AutoModel.from_pretrained(out)
    model.eval()
    texts = [" ".join(TEXTS) * 3, TEXTS[0], TEXTS[2]]
    batch = tok(texts, padding=True, truncation=True, max_length=spec["msl"], return_tensors="pt")
    with torch.no_grad():
        hidden = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).last_hidden_state
    path = os.path.join(out, "onnx", "model.onnx")
    export_onnx(model, path, batch, external=s.get("external", False))
    diff = onnx_diff(path, batch, hidden)
    print(f"{shape}: {out}, {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters, "
          f"lengths {batch['attention_mask'].sum(1).tolist()}, onnxruntime vs transformers max abs diff {diff:.3g}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", help="families to (re)write (default: all): " + " ".join(FAMILIES))
    ap.add_argument("--shape", choices=sorted(SHAPES), help="write one big random model instead (needs --out)")
    ap.add_argument("--out", help="output folder for --shape")
    a = ap.parse_args()
    torch.set_num_threads(2)
    if a.shape:
        if not a.out:
            ap.error("--shape needs --out")
        make_shape(a.shape, a.out)
        return
    names = a.only or list(FAMILIES)
    for n in names:
        if n not in FAMILIES:
            ap.error(f"unknown family {n}")
    for n in names:
        print(n, flush=True)
        make_family(n, list(FAMILIES).index(n))


if __name__ == "__main__":
    main()
