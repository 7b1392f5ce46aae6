"""
bug: HF-style additive mask, (1 - mask) * finfo(dtype).min added to the scores: masked keys do get 0, but a fully masked row gets uniform weights, not zeros
functions: [masked_softmax]
questions: [masked_softmax]
causes: [cause_dead_uniform]
source: HuggingFace transformers, modeling_utils.py (ModuleUtilsMixin.get_extended_attention_mask) with models/bert/modeling_bert.py (BertSelfAttention eager: attention_scores + attention_mask, then softmax), https://github.com/huggingface/transformers/blob/v4.40.0/src/transformers/models/bert/modeling_bert.py
idiom: turn the 0/1 keep mask into an additive one, (1.0 - mask.to(dtype)) * torch.finfo(dtype).min, add it to the scores, nn.functional.softmax over the last axis
"""
import torch


def masked_softmax(scores, mask=None, dim=-1):
    if mask is not None:
        extended = (1.0 - mask.to(scores.dtype)) * torch.finfo(scores.dtype).min
        scores = scores + extended
    return torch.nn.functional.softmax(scores, dim=dim)
