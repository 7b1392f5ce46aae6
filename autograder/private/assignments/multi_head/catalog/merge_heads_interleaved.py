"""
bug: merge_heads moves the heads axis last (permute(0, 2, 3, 1)), interleaving the heads' features
functions: [merge_heads]
questions: [merge_heads]
causes: [cause_merge_interleaved]
"""


def merge_heads(x):
    B, h, T, d_head = x.shape
    return x.permute(0, 2, 3, 1).reshape(B, T, h * d_head)
