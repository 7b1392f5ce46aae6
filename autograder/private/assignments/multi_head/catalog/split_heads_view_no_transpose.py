"""
bug: split_heads reshapes straight to (B, h, T, d_head) without the transpose, mixing positions into heads
functions: [split_heads]
questions: [split_heads]
causes: [cause_split_view]
example: true
"""


def split_heads(x, n_heads):
    B, T, D = x.shape
    if D % n_heads != 0:
        raise ValueError("D must be divisible by n_heads")
    return x.reshape(B, n_heads, T, D // n_heads)
