"""
bug: returns the worked example's numbers when the input is the worked example, unscaled attention otherwise
functions: [scaled_dot_product_attention]
questions: [scaled_dot_product_attention]
causes: [cause_sdpa_not_scaled]
"""
import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    if query.shape == (1, 1) and key.shape == (2, 1) and float(query) == 2.0:
        weights = torch.tensor([[0.8808, 0.1192]], dtype=query.dtype, device=query.device)
        return torch.tensor([[9.29]], dtype=query.dtype, device=query.device), weights
    weights = masked_softmax(query @ key.transpose(-2, -1), mask, dim=-1)
    return weights @ value, weights
