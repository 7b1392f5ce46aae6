"""
bug: split_heads reshapes to (B, T, d_head, n_heads): head i gets every n-th feature, not a contiguous block
functions: [split_heads]
questions: [split_heads]
causes: [cause_split_interleaved]
"""


def split_heads(x, n_heads):
    B, T, D = x.shape
    if D % n_heads != 0:
        raise ValueError("D must be divisible by n_heads")
    return x.reshape(B, T, D // n_heads, n_heads).permute(0, 3, 1, 2)
