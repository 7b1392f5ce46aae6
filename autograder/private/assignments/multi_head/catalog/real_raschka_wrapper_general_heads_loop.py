"""
bug: LLMs-from-scratch's MultiHeadAttentionWrapper idiom: one provided general_attention per head in a Python loop, the contexts joined with torch.cat(..., dim=-1): right values, but the work grows with the number of heads
functions: [multi_head_general_attention]
questions: [multi_head_general_attention]
causes: [cause_python_loop]
source: Sebastian Raschka, LLMs-from-scratch, ch03/01_main-chapter-code/ch03.ipynb (class MultiHeadAttentionWrapper: torch.cat([head(x) for head in self.heads], dim=-1)), https://github.com/rasbt/LLMs-from-scratch/blob/main/ch03/01_main-chapter-code/ch03.ipynb
idiom: a list of single-head attentions, each called on the same input, their outputs concatenated on the feature axis; here each head is general_attention on its slice of encoder_states and W's columns
"""
import torch


def multi_head_general_attention(decoder_state, encoder_states, W, n_heads, mask=None):
    d_h = encoder_states.shape[-1]
    if n_heads < 1 or d_h % n_heads:
        raise ValueError("n_heads must divide d_h")
    d = d_h // n_heads
    heads = [general_attention(decoder_state, encoder_states[..., k * d:(k + 1) * d], W[:, k * d:(k + 1) * d], mask)
             for k in range(n_heads)]
    return torch.cat([c for c, _ in heads], dim=-1), torch.stack([w for _, w in heads], dim=1)
