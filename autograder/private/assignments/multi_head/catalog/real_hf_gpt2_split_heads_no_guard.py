"""
bug: GPT2Attention._split_heads has no divisibility check of its own (GPT-2 checks in __init__): D % n_heads != 0 raises view's RuntimeError, not ValueError
functions: [split_heads]
questions: [split_heads]
causes: [cause_sizes_checked_late]
source: HuggingFace transformers, models/gpt2/modeling_gpt2.py (GPT2Attention._split_heads), https://github.com/huggingface/transformers/blob/v4.40.0/src/transformers/models/gpt2/modeling_gpt2.py
idiom: new_shape = tensor.size()[:-1] + (num_heads, attn_head_size); tensor.view(new_shape).permute(0, 2, 1, 3)
"""
def split_heads(x, n_heads):
    attn_head_size = x.size(-1) // n_heads
    new_shape = x.size()[:-1] + (n_heads, attn_head_size)
    return x.view(new_shape).permute(0, 2, 1, 3)
