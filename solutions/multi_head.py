"""Reference solutions for the `multi_head` assignment.

`masked_softmax` and `scaled_dot_product_attention` are provided to students
(generated from the earlier assignments' solutions); the rest is graded.
"""
from torch import nn

from .classic_attention import masked_softmax
from .scaled_dot_product import scaled_dot_product_attention

PROVIDED = ("masked_softmax", "scaled_dot_product_attention")


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
