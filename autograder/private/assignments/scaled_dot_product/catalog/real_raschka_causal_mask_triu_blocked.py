"""
bug: LLMs-from-scratch's causal mask is triu(ones, diagonal=1).bool(), True where a key is BLOCKED: the contract's polarity inverted (True must mean allowed)
functions: [causal_mask]
questions: [causal_mask]
causes: [cause_causal_marks_hidden]
source: Sebastian Raschka, LLMs-from-scratch, ch03/01_main-chapter-code/ch03.ipynb (CausalAttention: register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)), then self.mask.bool()), https://github.com/rasbt/LLMs-from-scratch/blob/main/ch03/01_main-chapter-code/ch03.ipynb
idiom: torch.triu(torch.ones(T, T), diagonal=1).bool(), the mask later used with masked_fill_(mask_bool, -torch.inf)
"""
import torch


def causal_mask(seq_len, device=None):
    return torch.triu(torch.ones(seq_len, seq_len, device=device), diagonal=1).bool()
