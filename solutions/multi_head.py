"""Reference solutions for the `multi_head` assignment.

`masked_softmax`, `general_attention` and `scaled_dot_product_attention` are
provided to students (generated from the earlier assignments' solutions); the
rest is graded. `general_attention` is there so that a student can check that
`multi_head_general_attention` with one head is the Luong general attention of
the first assignment.
"""
from torch import nn

from .classic_attention import general_attention, masked_softmax
from .scaled_dot_product import scaled_dot_product_attention

PROVIDED = ("masked_softmax", "general_attention", "scaled_dot_product_attention")


def split_heads(x, n_heads):
    """Split the feature axis into heads.

    Args:
        x: (B, T, D).
        n_heads: the number of heads h; must divide D.

    Returns:
        (B, h, T, D // h): head i holds features i*D/h .. (i+1)*D/h - 1.

    Raises:
        ValueError: when D % n_heads != 0.
    """
    B, T, D = x.shape
    if D % n_heads != 0:
        raise ValueError(f"embedding size {D} is not divisible by n_heads={n_heads}")
    return x.reshape(B, T, n_heads, D // n_heads).transpose(1, 2)  # (B, h, T, d_head)


def merge_heads(x):
    """Merge heads back into the feature axis: the inverse of `split_heads`.

    Args:
        x: (B, h, T, d_head).

    Returns:
        (B, T, h * d_head).
    """
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_head)  # (B, T, D)


class MultiHeadAttention(nn.Module):
    """Multi-head attention with separate query, key, value and output projections.

    Args:
        embed_dim: the model size D.
        n_heads: the number of heads h; must divide D.
        bias: whether the four projections have a bias.

    Attributes:
        q_proj, k_proj, v_proj, out_proj: nn.Linear(embed_dim, embed_dim, bias=bias).

    Raises:
        ValueError: when embed_dim % n_heads != 0.
    """

    def __init__(self, embed_dim, n_heads, bias=True):
        super().__init__()
        if embed_dim % n_heads != 0:
            raise ValueError(f"embed_dim={embed_dim} is not divisible by n_heads={n_heads}")
        self.embed_dim = embed_dim
        self.n_heads = n_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)

    def forward(self, query, key, value, mask=None):
        """Attend from `query` to `key`/`value` in every head.

        Args:
            query: (B, T_q, D). key, value: (B, T_k, D).
            mask: bool, broadcastable to (B, h, T_q, T_k), True where allowed:
                (T_q, T_k) causal, (B, 1, 1, T_k) padding, (B, 1, T_q, T_k) both.

        Returns:
            (output (B, T_q, D), weights (B, h, T_q, T_k)), one map per head.
        """
        q = split_heads(self.q_proj(query), self.n_heads)  # (B, h, T_q, d_head)
        k = split_heads(self.k_proj(key), self.n_heads)  # (B, h, T_k, d_head)
        v = split_heads(self.v_proj(value), self.n_heads)  # (B, h, T_k, d_head)
        heads, weights = scaled_dot_product_attention(q, k, v, mask)  # (B, h, T_q, d_head)
        return self.out_proj(merge_heads(heads)), weights  # (B, T_q, D)


def multi_head_general_attention(decoder_state, encoder_states, W, n_heads, mask=None):
    """Multi-head Luong general attention: one general attention per group of d_h.

    The d_h features of the encoder states are cut into n_heads consecutive
    groups of d_head = d_h // n_heads; head k scores the decoder state against
    the k-th group with the k-th block of d_head columns of W,
        e[b, k, i] = s_b . (W_k h_{b,i,k}),  W_k = W[:, k*d_head:(k+1)*d_head],
    takes its own masked softmax over the keys and its own context from the
    k-th group; the heads' contexts are concatenated in head order. With
    n_heads == 1 this is `general_attention`.

    Args:
        decoder_state: (B, d_s). encoder_states: (B, T, d_h). W: (d_s, d_h).
        n_heads: the number of heads, an int >= 1 that divides d_h.
        mask: (B, T) bool, True for real tokens (the same in every head), or None.

    Returns:
        (context (B, d_h), weights (B, n_heads, T)): context[:, k*d_head:(k+1)*d_head]
        is head k's context; weights[:, k] its weights.

    Raises:
        ValueError: when n_heads < 1 or n_heads does not divide d_h.
    """
    B, T, d_h = encoder_states.shape
    d_s = decoder_state.shape[-1]
    if n_heads < 1 or d_h % n_heads != 0:
        raise ValueError(f"n_heads={n_heads} must be a positive divisor of d_h={d_h}")
    d_head = d_h // n_heads
    H = encoder_states.reshape(B, T, n_heads, d_head).transpose(1, 2)  # (B, n_heads, T, d_head)
    W_heads = W.reshape(d_s, n_heads, d_head).transpose(0, 1)  # (n_heads, d_s, d_head): W_k
    projected = H @ W_heads.transpose(-2, -1)  # (B, n_heads, T, d_s): W_k h_{b,i,k}
    scores = (projected @ decoder_state[:, None, :, None]).squeeze(-1)  # (B, n_heads, T)
    head_mask = None if mask is None else mask[:, None, :]  # (B, 1, T): the same in every head
    weights = masked_softmax(scores, head_mask, dim=-1)  # (B, n_heads, T)
    context = (weights.unsqueeze(-2) @ H).squeeze(-2)  # (B, n_heads, d_head)
    return context.reshape(B, d_h), weights  # heads side by side: (B, d_h)
