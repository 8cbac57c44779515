package io.attn.nn;

import io.attn.AttnException;
import io.attn.graph.GraphBuilder;
import io.attn.graph.Node;

/**
 * {@code torch.nn.MultiheadAttention(embed_dim, num_heads, bias=True, batch_first=True)} with {@code kdim = vdim =
 * embed_dim}. State: {@code in_proj_weight (3E, E)}, {@code in_proj_bias (3E)}, {@code out_proj.weight (E, E)},
 * {@code out_proj.bias (E)} (biases absent when {@code bias=false}).
 *
 * <p>Forward: q, k, v projections, split into H heads of D = E/H, softmax(Q K^T / sqrt(D) + masks) V per head, merge,
 * output projection. When no attention weights are requested the heads run as one fused {@code ATTENTION} op;
 * otherwise the weights are materialised (SOFTMAX of the product {@code q k^T}, see {@link
 * io.attn.graph.GraphBuilder#attentionWeights}, then MATMUL) and returned averaged over heads or per head.
 */
public final class MultiheadAttention {
    private final String name;
    private final int embedDim;
    private final int numHeads;
    private final int kvHeads, headDim; // grouped-query attention: K/V heads (a divisor of numHeads), head size
    private final Linear q, k, v, out;
    private final RmsNorm qNorm, kNorm; // Qwen3's per-head RMSNorm of queries and keys before RoPE; null: none
    private final Norm qFullNorm, kFullNorm; // a LayerNorm of the whole query / key projection (JinaBERT code); null
    private final float scale; // the scores' scale in forwardRotary: 1 / sqrt(headDim), or Gemma's own

    /** Loads from {@code sd} under {@code prefix} (e.g. {@code "layers.0.self_attn."}, or {@code ""}). */
    public MultiheadAttention(StateDict sd, String prefix, int embedDim, int numHeads, boolean bias) {
        if (embedDim <= 0 || numHeads <= 0 || embedDim % numHeads != 0)
            throw AttnException.shape(
                    "embed_dim " + embedDim + " is not divisible by num_heads " + numHeads + " (" + prefix + ")");
        this.name = prefix.isEmpty() ? "attn" : prefix.substring(0, prefix.length() - 1);
        this.embedDim = embedDim;
        this.numHeads = numHeads;
        this.kvHeads = numHeads;
        this.headDim = embedDim / numHeads;
        this.qNorm = null;
        this.kNorm = null;
        this.qFullNorm = null;
        this.kFullNorm = null;
        this.scale = defaultScale(headDim);
        int e = embedDim;
        // float (3E, E), or int8 (E, 3E) with its scales and zero points (attn quantize of a DecoderOnlyLM)
        Linear in =
                Linear.load(sd, name + ".in_proj", prefix + "in_proj_weight", prefix + "in_proj_bias", e, 3 * e, bias);
        q = in.outputs(name + ".q_proj", 0, e);
        k = in.outputs(name + ".k_proj", e, 2 * e);
        v = in.outputs(name + ".v_proj", 2 * e, 3 * e);
        out = Linear.load(sd, prefix + "out_proj.", e, e, bias);
    }

    /**
     * Built from separate projections (Hugging Face's {@code query}, {@code key}, {@code value} and output {@code dense}
     * layers), each {@code (E, E)}; {@code name} keys this block's attention weights.
     */
    MultiheadAttention(String name, int embedDim, int numHeads, Linear q, Linear k, Linear v, Linear out) {
        this(name, embedDim, numHeads, q, k, v, out, null, null);
    }

    /**
     * Like {@link #MultiheadAttention(String, int, int, Linear, Linear, Linear, Linear)} with {@code qNorm} / {@code
     * kNorm} (E) normalising the whole query / key projection before the heads split (jina-bert-v2-qk-post-norm's
     * {@code layer_norm_q} / {@code layer_norm_k}); null for none.
     */
    MultiheadAttention(
            String name, int embedDim, int numHeads, Linear q, Linear k, Linear v, Linear out, Norm qNorm, Norm kNorm) {
        if (embedDim <= 0 || numHeads <= 0 || embedDim % numHeads != 0)
            throw AttnException.shape("hidden size " + embedDim + " is not divisible by the number of heads " + numHeads
                    + " (" + name + ")");
        this.name = name;
        this.embedDim = embedDim;
        this.numHeads = numHeads;
        this.kvHeads = numHeads;
        this.headDim = embedDim / numHeads;
        this.q = q;
        this.k = k;
        this.v = v;
        this.out = out;
        this.qNorm = null;
        this.kNorm = null;
        this.qFullNorm = qNorm;
        this.kFullNorm = kNorm;
        this.scale = defaultScale(headDim);
    }

    /**
     * Grouped-query attention (a decoder's {@code self_attn}): {@code q} (H D, E), {@code k} and {@code v} (Hkv D, E)
     * with {@code Hkv} dividing H, each query head reading K/V head {@code h / (H / Hkv)} (the ATTENTION op's grouping,
     * no K/V copy), {@code out} (E, H D); {@code qNorm} / {@code kNorm} (D) an RMSNorm of each query / key head before
     * the rotation (Qwen3, Gemma), or null; the scores scaled by {@code scale} ({@code 1 / sqrt(D)}, or Gemma's {@code
     * query_pre_attn_scalar^-0.5}). Only {@link #forwardRotary} runs it.
     */
    MultiheadAttention(
            String name,
            int embedDim,
            int numHeads,
            int kvHeads,
            int headDim,
            Linear q,
            Linear k,
            Linear v,
            Linear out,
            RmsNorm qNorm,
            RmsNorm kNorm,
            float scale) {
        if (embedDim <= 0 || numHeads <= 0 || kvHeads <= 0 || headDim <= 0 || numHeads % kvHeads != 0)
            throw AttnException.shape("hidden size " + embedDim + ", " + numHeads + " heads of " + headDim + ", "
                    + kvHeads + " key/value heads: the heads must be a multiple of the key/value heads (" + name + ")");
        this.name = name;
        this.embedDim = embedDim;
        this.numHeads = numHeads;
        this.kvHeads = kvHeads;
        this.headDim = headDim;
        this.q = q;
        this.k = k;
        this.v = v;
        this.out = out;
        this.qNorm = qNorm;
        this.kNorm = kNorm;
        this.qFullNorm = null;
        this.kFullNorm = null;
        this.scale = scale;
    }

    private static float defaultScale(int headDim) {
        return (float) (1.0 / Math.sqrt(headDim));
    }

    public int embedDim() {
        return embedDim;
    }

    public int numHeads() {
        return numHeads;
    }

    /** State-dict prefix without the trailing dot; the key of this block's weights in {@link Forward#weightNodes()}. */
    public String name() {
        return name;
    }

    /**
     * query {@code (B, L, E)}, key and value {@code (B, S, E)}; returns {@code (B, L, E)}. Records the attention
     * weights in {@code f} when it asks for them.
     */
    public Node forward(Forward f, Node query, Node key, Node value, Masks masks) {
        GraphBuilder g = f.g;
        for (Node x : new Node[] {query, key, value})
            if (x.shape().rank() != 3 || x.shape().dim(2) != embedDim)
                throw AttnException.shape(name + ": input " + x.shape() + " does not have embed_dim " + embedDim
                        + " as its last dimension (expected (B, L, " + embedDim + "))");
        Node qh = heads(f, q, qFullNorm, query, numHeads), kh = heads(f, k, kFullNorm, key, numHeads);
        Node vh = v.forwardHeads(f, value, numHeads);
        float scale = (float) (1.0 / Math.sqrt((double) embedDim / numHeads));
        Node o = ScaledDotProductAttention.forward(f, name, qh, kh, vh, masks, scale);
        return out.forward(f, g.mergeHeads(o));
    }

    /** {@code proj(x)} split into {@code heads} heads, after {@code fullNorm} of the whole projection if there is one. */
    private static Node heads(Forward f, Linear proj, Norm fullNorm, Node x, int heads) {
        return fullNorm == null
                ? proj.forwardHeads(f, x, heads)
                : f.g.splitHeads(fullNorm.forward(f, proj.forward(f, x)), heads);
    }

    /**
     * Self-attention of {@code x (B, L, E)} with rotary positions: the first {@code rotary.dims()} of each head's
     * query and key rotated (rotate-half, base {@code rotary.theta()}) by the position ids {@code positions (B, L)}
     * before the scores (transformers' {@code apply_rotary_pos_emb}); with grouped K/V heads and q/k norms when built
     * so. Returns {@code (B, L, E)}.
     */
    public Node forwardRotary(Forward f, Node x, Masks masks, EncoderConfig.Rotary rotary, Node positions) {
        GraphBuilder g = f.g;
        if (x.shape().rank() != 3 || x.shape().dim(2) != embedDim)
            throw AttnException.shape(name + ": input " + x.shape() + " does not have embed_dim " + embedDim);
        Node qh = heads(f, q, qFullNorm, x, numHeads), kh = heads(f, k, kFullNorm, x, kvHeads);
        if (qNorm != null) qh = qNorm.forward(f, qh);
        if (kNorm != null) kh = kNorm.forward(f, kh);
        qh = g.rope(qh, positions, rotary.theta(), rotary.dims(), 0, rotary.scaling());
        kh = g.rope(kh, positions, rotary.theta(), rotary.dims(), 0, rotary.scaling());
        Node vh = v.forwardHeads(f, x, kvHeads);
        Node o = ScaledDotProductAttention.forward(f, name, qh, kh, vh, masks, scale);
        return out.forward(f, g.mergeHeads(o));
    }

    /**
     * Self-attention of new tokens {@code x (B, L, E)} against a key/value cache: their keys and values are written into
     * {@code kCache} and {@code vCache} {@code (B, H, C, D)} (graph inputs, usually bound to backend buffers) at the row
     * held by {@code pos (1)}, and the queries attend to every cache row the masks leave visible (the caller's key-padding
     * mask {@code (B, C)} hides rows not yet written). Returns {@code (B, L, E)}.
     */
    public Node forwardCached(Forward f, Node x, Node kCache, Node vCache, Node pos, Masks masks) {
        GraphBuilder g = f.g;
        if (x.shape().rank() != 3 || x.shape().dim(2) != embedDim)
            throw AttnException.shape(name + ": input " + x.shape() + " does not have embed_dim " + embedDim);
        Node qh = q.forwardHeads(f, x, numHeads);
        Node kc = g.cacheWrite(kCache, k.forwardHeads(f, x, numHeads), pos);
        Node vc = g.cacheWrite(vCache, v.forwardHeads(f, x, numHeads), pos);
        float scale = (float) (1.0 / Math.sqrt((double) embedDim / numHeads));
        Node o = ScaledDotProductAttention.forward(f, name, qh, kc, vc, masks, scale);
        return out.forward(f, g.mergeHeads(o));
    }
}
