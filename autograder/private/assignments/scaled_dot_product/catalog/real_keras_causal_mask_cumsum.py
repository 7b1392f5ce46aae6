"""
correct: Keras' lower-triangular mask from two cumulative sums of ones: row index >= column index
functions: [causal_mask]
questions: []
source: Keras, keras/layers/attention/base_dense_attention.py / attention.py (_lower_triangular_mask: cumsum of ones along -2 and -1, greater_equal), https://github.com/keras-team/keras/blob/v2.13.1/keras/layers/attention/attention.py
idiom: row_index = cumsum(ones(shape), axis=-2); col_index = cumsum(ones(shape), axis=-1); greater_equal(row_index, col_index)
"""
import torch


def causal_mask(seq_len, device=None):
    ones = torch.ones(seq_len, seq_len, dtype=torch.int32, device=device)
    row_index = torch.cumsum(ones, dim=-2)
    col_index = torch.cumsum(ones, dim=-1)
    return torch.greater_equal(row_index, col_index)
