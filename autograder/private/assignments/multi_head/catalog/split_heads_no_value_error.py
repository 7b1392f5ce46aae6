"""
bug: split_heads never checks D % n_heads: a view raises RuntimeError instead of ValueError
functions: [split_heads]
questions: [split_heads]
causes: [cause_sizes_checked_late]
"""


def split_heads(x, n_heads):
    B, T, D = x.shape
    return x.view(B, T, n_heads, -1).transpose(1, 2)
