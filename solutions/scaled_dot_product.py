"""Reference solutions for the `scaled_dot_product` assignment.

`masked_softmax` is provided to students (generated from
`solutions.classic_attention`); the three functions below are graded, and
so is `by_hand`, a question answered with numbers rather than code (`BY_HAND`).
"""
import math

import torch

from .classic_attention import masked_softmax

PROVIDED = ("masked_softmax",)

# Questions answered with numbers typed into a notebook cell, not with a function: the
# build makes no stub for them (autograder.build.sync) and the judge reads the cell
# without running it (autograder.judge.reader). `by_hand`: attention for one query of
# "the cat sleeps" ("sleeps" asks who sleeps), computed by hand. The notebook shows these
# numbers; the hidden suite computes the answers from them with
# `scaled_dot_product_attention`, in float64.
BY_HAND = {
    "by_hand": {
        "query": [[2.0, 1.0]],                          # (T_q = 1, d_k = 2): "sleeps"
        "key": [[0.0, 0.0], [2.0, 0.0], [0.0, 2.0]],    # (T_k = 3, d_k = 2): "the", "cat", "sleeps"
        "value": [[1.0, 1.0], [4.0, 0.0], [0.0, 2.0]],  # (T_k = 3, d_v = 2)
    },
}


def causal_mask(seq_len, device=None):
    """Causal (look-ahead) mask.

    Args:
        seq_len: the sequence length T.
        device: where to build the mask (None: the default device).

    Returns:
        bool tensor (T, T), True on and below the diagonal: query t may attend
        to keys 0 .. t.
    """
    return torch.ones(seq_len, seq_len, dtype=torch.bool, device=device).tril()


def padding_mask(lengths, max_len=None):
    """Padding mask from sequence lengths.

    Args:
        lengths: 1-D integer tensor (B,), the real length of each sequence.
        max_len: the padded length; defaults to lengths.max().

    Returns:
        bool tensor (B, max_len) on `lengths.device`, True where position < lengths[b].
    """
    if max_len is None:
        max_len = int(lengths.max())
    positions = torch.arange(max_len, device=lengths.device)  # (max_len,)
    return positions.unsqueeze(0) < lengths.unsqueeze(1)  # (B, max_len)


def scaled_dot_product_attention(query, key, value, mask=None):
    """Scaled dot-product attention: softmax(Q K^T / sqrt(d_k)) V.

    Args:
        query: (..., T_q, d_k). key: (..., T_k, d_k). value: (..., T_k, d_v).
        mask: bool, broadcastable to (..., T_q, T_k), True where allowed; or None.

    Returns:
        (output (..., T_q, d_v), weights (..., T_q, T_k)). A query whose keys
        are all masked gets zero weights and a zero output.
    """
    d_k = query.shape[-1]
    scores = query @ key.transpose(-2, -1) / math.sqrt(d_k)  # (..., T_q, T_k)
    weights = masked_softmax(scores, mask, dim=-1)  # (..., T_q, T_k)
    return weights @ value, weights  # (..., T_q, d_v)
