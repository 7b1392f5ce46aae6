"""
bug: merge_heads uses transpose_ and changes the caller's tensor in place
functions: [merge_heads]
questions: [merge_heads]
causes: [cause_in_place]
"""


def merge_heads(x):
    B, h, T, d_head = x.shape
    x.transpose_(1, 2)
    return x.reshape(B, T, h * d_head)
