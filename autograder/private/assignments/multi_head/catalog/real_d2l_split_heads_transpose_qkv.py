"""
bug: d2l's transpose_qkv folds the heads into the batch axis: split_heads returns (B*h, T, D/h), not (B, h, T, D/h)
functions: [split_heads]
questions: [split_heads]
causes: [cause_axes_folded]
source: Dive into Deep Learning, transpose_qkv (section "Multi-Head Attention"), https://d2l.ai/chapter_attention-mechanisms-and-transformers/multihead-attention.html
idiom: X.reshape(X.shape[0], X.shape[1], num_heads, -1); X.permute(0, 2, 1, 3); X.reshape(-1, X.shape[2], X.shape[3])
"""
def split_heads(x, n_heads):
    if x.shape[-1] % n_heads != 0:
        raise ValueError("the feature size must be a multiple of n_heads")
    x = x.reshape(x.shape[0], x.shape[1], n_heads, -1)
    x = x.permute(0, 2, 1, 3)
    return x.reshape(-1, x.shape[2], x.shape[3])
