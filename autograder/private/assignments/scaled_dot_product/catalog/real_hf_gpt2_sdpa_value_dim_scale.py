"""
bug: GPT2Attention's eager path divides by value.size(-1) ** 0.5 (d_v, equal to d_k only in GPT-2) and masks with torch.where(mask, scores, finfo.min), so d_v != d_k is scaled wrongly and a fully masked row gets uniform weights
functions: [scaled_dot_product_attention]
questions: [scaled_dot_product_attention]
causes: [cause_sdpa_divided_by_sqrt_dv, cause_dead_uniform, cause_sdpa_dead_uniform]
source: HuggingFace transformers, models/gpt2/modeling_gpt2.py (GPT2Attention._attn, eager), https://github.com/huggingface/transformers/blob/v4.40.0/src/transformers/models/gpt2/modeling_gpt2.py
idiom: attn_weights / torch.full([], value.size(-1) ** 0.5, dtype=..., device=...); mask_value = torch.full([], torch.finfo(dtype).min, ...); torch.where(causal_mask, attn_weights, mask_value); softmax(dim=-1); matmul with value
"""
import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    attn_weights = torch.matmul(query, key.transpose(-1, -2))
    attn_weights = attn_weights / torch.full(
        [], value.size(-1) ** 0.5, dtype=attn_weights.dtype, device=attn_weights.device
    )
    if mask is not None:
        mask_value = torch.full([], torch.finfo(attn_weights.dtype).min, dtype=attn_weights.dtype,
                                device=attn_weights.device)
        attn_weights = torch.where(mask, attn_weights, mask_value)
    attn_weights = torch.nn.functional.softmax(attn_weights, dim=-1)
    return torch.matmul(attn_weights, value), attn_weights
