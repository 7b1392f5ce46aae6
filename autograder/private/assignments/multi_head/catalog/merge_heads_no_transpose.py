"""
bug: merge_heads reshapes (B, h, T, d_head) straight to (B, T, D) without moving the heads axis back
functions: [merge_heads]
questions: [merge_heads]
causes: [cause_merge_no_transpose]
"""


def merge_heads(x):
    B, h, T, d_head = x.shape
    return x.reshape(B, T, h * d_head)
