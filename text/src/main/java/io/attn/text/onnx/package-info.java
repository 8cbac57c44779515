/**
 * The ONNX importer: {@link io.attn.text.onnx.OnnxBert} reads a BERT-family encoder exported to ONNX as the Hugging
 * Face config and BertModel weights. {@code io.attn.text.onnx.proto} holds the classes protoc generates from ONNX's
 * {@code onnx.proto} at build time.
 */
package io.attn.text.onnx;
