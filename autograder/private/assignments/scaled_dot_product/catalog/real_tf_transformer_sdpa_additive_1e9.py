"""
bug: the TensorFlow Transformer tutorial's scaled_dot_product_attention adds mask * -1e9 (here (1 - keep) * -1e9) with d_k cast to float32: a fully masked query gets the plain softmax, not zeros, and the float32 mask promotes half inputs to float32
functions: [scaled_dot_product_attention]
questions: [scaled_dot_product_attention]
causes: [cause_float32_detour, cause_dead_additive_mask, cause_dtype_mix]
source: TensorFlow tutorials, "Transformer model for language understanding" (scaled_dot_product_attention, TF 2.x version), https://www.tensorflow.org/text/tutorials/transformer
idiom: matmul_qk = matmul(q, k, transpose_b=True); dk = cast(shape(k)[-1], float32); scaled = matmul_qk / sqrt(dk); scaled += mask * -1e9 with a float32 mask; softmax(axis=-1); matmul(weights, v)
"""
import torch


def scaled_dot_product_attention(query, key, value, mask=None):
    matmul_qk = torch.matmul(query, key.transpose(-2, -1))
    dk = torch.tensor(key.shape[-1], dtype=torch.float32)
    scaled = matmul_qk / torch.sqrt(dk)
    if mask is not None:
        scaled = scaled + (1.0 - mask.float()) * -1e9
    attention_weights = torch.softmax(scaled, dim=-1)
    return torch.matmul(attention_weights, value), attention_weights
