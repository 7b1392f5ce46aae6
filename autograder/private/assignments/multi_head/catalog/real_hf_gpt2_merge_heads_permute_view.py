"""
correct: GPT2Attention._merge_heads: permute back, contiguous, view to h * d_head features
functions: [merge_heads]
questions: []
source: HuggingFace transformers, models/gpt2/modeling_gpt2.py (GPT2Attention._merge_heads), https://github.com/huggingface/transformers/blob/v4.40.0/src/transformers/models/gpt2/modeling_gpt2.py
idiom: tensor.permute(0, 2, 1, 3).contiguous(); new_shape = tensor.size()[:-2] + (num_heads * attn_head_size,); tensor.view(new_shape)
"""
def merge_heads(x):
    num_heads, attn_head_size = x.size(1), x.size(3)
    x = x.permute(0, 2, 1, 3).contiguous()
    new_shape = x.size()[:-2] + (num_heads * attn_head_size,)
    return x.view(new_shape)
