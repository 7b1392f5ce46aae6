"""Reference solutions for the `efficient_attention` assignment (docs/pages/efficient-contract.md).

Attention made cheap, as inference stacks make it: attention over the keys in blocks
with a running maximum and a running sum (the online softmax of Milakov and Gimelshein,
FlashAttention's recurrence), a key/value cache for the transformer lab's language
model, and grouped-query attention with its smaller cache.

Provided to students (PROVIDED, generated into the notebook's provided cell): their
earlier work, correct versions (`masked_softmax`, `scaled_dot_product_attention`,
`causal_mask`, `padding_mask`, `split_heads`, `merge_heads`, `MultiHeadAttention`),
the transformer lab's model and parts (`positional_encoding`, `FeedForward`,
`DecoderBlock`, `TransformerLM`) and the decoding driver the grader calls
(`decode_logits`). Graded: `blocked_attention`, `decode_step`,
`GroupedQueryAttention`.

Shapes (nanoGPT's names):
    query (..., T_q, d_k), key (..., T_k, d_k), value (..., T_k, d_v)
    tokens (B, T) int64; token (B,) int64; logits (B, V)
    a layer's cache (k, v), each (B, h, t, d_head): the t positions decoded so far
"""

import torch
from torch import nn

from .classic_attention import masked_softmax  # noqa: F401
from .multi_head import MultiHeadAttention, merge_heads, split_heads  # noqa: F401
from .scaled_dot_product import causal_mask, padding_mask, scaled_dot_product_attention  # noqa: F401
from .transformer_block import DecoderBlock, FeedForward, TransformerLM, positional_encoding  # noqa: F401

PROVIDED = (
    "masked_softmax",
    "scaled_dot_product_attention",
    "causal_mask",
    "padding_mask",
    "split_heads",
    "merge_heads",
    "MultiHeadAttention",
    "positional_encoding",
    "FeedForward",
    "DecoderBlock",
    "TransformerLM",
    "decode_logits",
)


# -- provided: the decoding driver ------------------------------------------------------
def decode_logits(sizes, state, tokens):
    """Build a TransformerLM from its sizes and parameters and feed it `tokens` one
    position at a time through your `decode_step`, starting from an empty cache. The
    grader calls this too.

    sizes: {"vocab_size", "d_model", "n_heads", "d_ff", "n_layers"}; state: the
    parameters by name (their dtype is the model's); tokens: (B, T) int64.

    Returns:
        (logits (B, T, V): step t's logits at position t, cache: the last step's cache).
    """
    model = TransformerLM(**sizes)
    model = model.to(next(iter(state.values())).dtype)
    model.load_state_dict(state)
    B, T = tokens.shape
    cache, steps = None, []
    with torch.no_grad():
        for t in range(T):
            logits, cache = decode_step(model, tokens[:, t], cache)  # (B, V)
            steps.append(logits)
    return torch.stack(steps, dim=1), cache  # (B, T, V)


# -- graded -----------------------------------------------------------------------------
def blocked_attention(query, key, value, mask=None, causal=False, block_size=32):
    """Scaled dot-product attention over the keys in blocks, with an online softmax.

    The keys and values are read `block_size` at a time; for each query a running
    maximum m of the scores seen so far, a running sum l of their exponentials
    (relative to m) and a running output o (the exponentials times the values) are
    updated block by block, rescaled by exp(m_old - m_new) whenever the maximum grows;
    the output is o / l. No (T_q, T_k) tensor is ever held: one block's scores
    (..., T_q, block_size) at most.

    Args:
        query: (..., T_q, d_k). key: (..., T_k, d_k). value: (..., T_k, d_v).
        mask: bool, broadcastable to (..., T_q, T_k) with its last size T_k, True where
            allowed (a padding mask as pad[:, None, :]); or None.
        causal: True also masks the future: query i sees the keys j <= i + T_k - T_q
            (the queries are the last T_q positions of the keys': with T_q = T_k the
            causal mask of scaled_dot_product_attention).
        block_size: the number of keys in one block (the last block may hold fewer).

    Returns:
        output (..., T_q, d_v): scaled_dot_product_attention's output. A query whose
        keys are all masked gets a zero output. The running statistics are kept in
        float32 for float16 and bfloat16 inputs; the output has the inputs' dtype.
    """
    T_q, d_k = query.shape[-2:]
    T_k = key.shape[-2]
    work = torch.float32 if query.dtype in (torch.float16, torch.bfloat16) else query.dtype
    q = query.to(work) * d_k**-0.5  # (..., T_q, d_k)
    lead = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    m = torch.full((*lead, T_q, 1), float("-inf"), dtype=work, device=query.device)  # running maximum
    l = torch.zeros((*lead, T_q, 1), dtype=work, device=query.device)  # noqa: E741  running sum
    o = torch.zeros((*lead, T_q, value.shape[-1]), dtype=work, device=query.device)  # running output
    rows = torch.arange(T_q, device=query.device)[:, None] + (T_k - T_q)  # (T_q, 1): the last key each sees
    for j0 in range(0, T_k, block_size):
        j1 = min(j0 + block_size, T_k)
        k, v = key[..., j0:j1, :].to(work), value[..., j0:j1, :].to(work)  # (..., b, d)
        s = q @ k.transpose(-2, -1)  # (..., T_q, b): this block's scores
        allowed = None if mask is None else mask[..., j0:j1]
        if causal:
            future = torch.arange(j0, j1, device=query.device)[None, :] <= rows  # (T_q, b)
            allowed = future if allowed is None else allowed & future
        if allowed is not None:
            s = s.masked_fill(~allowed, float("-inf"))
        m_new = torch.maximum(m, s.amax(-1, keepdim=True))  # (..., T_q, 1)
        safe = m_new.masked_fill(m_new == float("-inf"), 0.0)  # a row with no allowed key yet: exp(-inf) = 0
        p = torch.exp(s - safe)  # (..., T_q, b)
        rescale = torch.exp(m - safe)  # (..., T_q, 1): 0 where nothing was seen before
        l = l * rescale + p.sum(-1, keepdim=True)  # noqa: E741
        o = o * rescale + p @ v
        m = m_new
    out = o / l.masked_fill(l == 0, 1.0)  # a row with no allowed key: o = 0
    return out.to(query.dtype)  # (..., T_q, d_v)


def decode_step(model, token, cache=None):
    """One step of greedy decoding with a key/value cache: the logits for the token
    after `token`, computed from this position alone and the cached keys and values
    of the earlier ones.

    Args:
        model: a TransformerLM (the provided one).
        token: (B,) int64, the token at position t, where t is the number of
            positions in `cache` (0 when cache is None).
        cache: None (the first step), or a list of one (k, v) per block, each
            (B, n_heads, t, d_head): the keys and values of positions 0 .. t - 1
            after that block's projections.

    Returns:
        (logits (B, V): model(tokens)[:, t] for the tokens so far, cache: the list
        with each block's (k, v) grown to (B, n_heads, t + 1, d_head)).
    """
    t = 0 if cache is None else cache[0][0].shape[-2]
    x = model.embed(token)[:, None, :]  # (B, 1, D)
    B, _, D = x.shape
    x = x + positional_encoding(t + 1, D, device=x.device, dtype=x.dtype)[t]  # position t's row
    grown = []
    for i, block in enumerate(model.blocks):
        attn = block.attn
        h = block.ln1(x)  # (B, 1, D)
        q = split_heads(attn.q_proj(h), attn.n_heads)  # (B, h, 1, d_head)
        k = split_heads(attn.k_proj(h), attn.n_heads)  # (B, h, 1, d_head)
        v = split_heads(attn.v_proj(h), attn.n_heads)
        if cache is not None:
            k = torch.cat([cache[i][0], k], dim=-2)  # (B, h, t + 1, d_head)
            v = torch.cat([cache[i][1], v], dim=-2)
        heads, _ = scaled_dot_product_attention(q, k, v)  # the newest query sees every key: no mask
        x = x + attn.out_proj(merge_heads(heads))  # (B, 1, D)
        x = x + block.ffn(block.ln2(x))
        grown.append((k, v))
    return model.head(model.ln_f(x))[:, 0], grown  # (B, V)


class GroupedQueryAttention(nn.Module):
    """Causal self-attention with n_kv_heads key/value heads shared by groups of
    n_heads // n_kv_heads query heads (n_kv_heads = 1: multi-query attention;
    n_kv_heads = n_heads: multi-head attention), and a key/value cache.

    Args:
        d_model: the model size D. n_heads: the query heads h; must divide D.
        n_kv_heads: the key/value heads g; must divide n_heads.

    Attributes:
        q_proj: nn.Linear(D, D). k_proj, v_proj: nn.Linear(D, g * d_head), d_head = D // h.
        out_proj: nn.Linear(D, D).
        Query head i uses key/value head i // (h // g): consecutive query heads share one.

    Raises:
        ValueError: when n_heads does not divide d_model or n_kv_heads does not divide n_heads.
    """

    def __init__(self, d_model, n_heads, n_kv_heads):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        if n_heads % n_kv_heads != 0:
            raise ValueError(f"n_heads={n_heads} is not divisible by n_kv_heads={n_kv_heads}")
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads
        d_head = d_model // n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, n_kv_heads * d_head)
        self.v_proj = nn.Linear(d_model, n_kv_heads * d_head)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, x, cache=None):
        """Attend from the new positions x to the cached ones and themselves, causally.

        Args:
            x: (B, T, D), positions t .. t + T - 1. cache: None, or (k, v), each
                (B, g, t, d_head): positions 0 .. t - 1.

        Returns:
            (output (B, T, D), cache (k, v), each (B, g, t + T, d_head)). Position
            t + i sees positions 0 .. t + i.
        """
        B, T, D = x.shape
        q = split_heads(self.q_proj(x), self.n_heads)  # (B, h, T, d_head)
        k = split_heads(self.k_proj(x), self.n_kv_heads)  # (B, g, T, d_head)
        v = split_heads(self.v_proj(x), self.n_kv_heads)
        if cache is not None:
            k = torch.cat([cache[0], k], dim=-2)  # (B, g, t + T, d_head)
            v = torch.cat([cache[1], v], dim=-2)
        T_k = k.shape[-2]
        mask = torch.ones(T, T_k, dtype=torch.bool, device=x.device).tril(T_k - T)  # (T, t + T)
        group = self.n_heads // self.n_kv_heads
        heads, _ = scaled_dot_product_attention(
            q, k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1), mask
        )  # (B, h, T, d_head)
        return self.out_proj(merge_heads(heads)), (k, v)
