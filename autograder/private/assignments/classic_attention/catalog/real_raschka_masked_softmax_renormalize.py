"""
bug: softmax first, then zero the disallowed weights and divide by the row sums (LLMs-from-scratch's first causal mask): a fully masked row is 0/0 = NaN, and an allowed key far below a masked one underflows to 0 before the renormalisation
functions: [masked_softmax]
questions: [masked_softmax]
causes: [cause_dead_nan, cause_unstable_exp]
source: Sebastian Raschka, LLMs-from-scratch, ch03/01_main-chapter-code/ch03.ipynb (section 3.5.1, mask_simple then row_sums renormalisation), https://github.com/rasbt/LLMs-from-scratch/blob/main/ch03/01_main-chapter-code/ch03.ipynb
idiom: attn_weights = softmax(scores); masked_simple = attn_weights * mask; masked_simple_norm = masked_simple / masked_simple.sum(dim=-1, keepdim=True)
"""
import torch


def masked_softmax(scores, mask=None, dim=-1):
    attn_weights = torch.softmax(scores, dim=dim)
    if mask is None:
        return attn_weights
    masked_simple = attn_weights * mask
    row_sums = masked_simple.sum(dim=dim, keepdim=True)
    return masked_simple / row_sums
