"""The checks' input tensors: seeded random values and masks, and values cast and moved
(`to`, `as_meta`). One seed gives one tensor on every machine.
"""

import torch


def gen(seed):
    return torch.Generator().manual_seed(seed)


def randn(shape, seed, dtype=torch.float64, scale=1.0):
    return torch.randn(shape, generator=gen(seed), dtype=torch.float64).mul(scale).to(dtype)


def rand_mask(shape, seed, p_true=0.7, ensure_row_dim=-1):
    """A random bool mask with at least one True along `ensure_row_dim` in every row."""
    m = torch.rand(shape, generator=gen(seed)) < p_true
    first = torch.zeros(shape, dtype=torch.bool)
    first.select(ensure_row_dim, 0).fill_(True)
    return m | first


def lengths_mask(lengths, T):
    return torch.arange(T).unsqueeze(0) < torch.as_tensor(lengths).unsqueeze(1)  # (B, T)


def to(value, device=None, dtype=None):
    """Cast the floating tensors in a (nested) value; other tensors only move."""
    if isinstance(value, torch.Tensor):
        if value.is_floating_point() and dtype is not None:
            value = value.to(dtype)
        return value.to(device) if device is not None else value
    if isinstance(value, (list, tuple)):
        return type(value)(to(v, device, dtype) for v in value)
    if isinstance(value, dict):
        return {k: to(v, device, dtype) for k, v in value.items()}
    return value


def as_meta(value):
    """The same value with every tensor on the meta device (shapes and dtypes only)."""
    if isinstance(value, torch.Tensor):
        return torch.empty(value.shape, dtype=value.dtype, device="meta")
    if isinstance(value, (list, tuple)):
        return type(value)(as_meta(v) for v in value)
    if isinstance(value, dict):
        return {k: as_meta(v) for k, v in value.items()}
    return value
