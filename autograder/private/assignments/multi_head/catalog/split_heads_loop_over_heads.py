"""
bug: split_heads slices one head at a time in a Python loop and stacks them
functions: [split_heads]
questions: [split_heads]
causes: [cause_python_loop]
"""
import torch


def split_heads(x, n_heads):
    B, T, D = x.shape
    if D % n_heads != 0:
        raise ValueError("D must be divisible by n_heads")
    d = D // n_heads
    return torch.stack([x[:, :, i * d:(i + 1) * d] for i in range(n_heads)], dim=1)
