"""
correct: every score with einsum, softmax through logsumexp with a finite fill value and fully masked rows zeroed
functions: [masked_softmax, additive_attention, general_attention]
questions: []
example: true
"""
import torch


def masked_softmax(scores, mask=None, dim=-1):
    if mask is None:
        return torch.exp(scores - torch.logsumexp(scores, dim=dim, keepdim=True))
    mask = mask.expand_as(scores)
    filled = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.exp(filled - torch.logsumexp(filled, dim=dim, keepdim=True))
    return torch.where(mask, weights, torch.zeros_like(weights))


def additive_attention(decoder_state, encoder_states, W_a, U_a, v_a, mask=None):
    q = torch.einsum("as,bs->ba", W_a, decoder_state)  # (B, d_attn)
    k = torch.einsum("ah,bth->bta", U_a, encoder_states)  # (B, T, d_attn)
    scores = torch.einsum("bta,a->bt", torch.tanh(q[:, None, :] + k), v_a)
    weights = masked_softmax(scores, mask)
    return torch.einsum("bt,bth->bh", weights, encoder_states), weights


def general_attention(decoder_state, encoder_states, W, mask=None):
    scores = torch.einsum("bs,sh,bth->bt", decoder_state, W, encoder_states)
    weights = masked_softmax(scores, mask)
    return torch.einsum("bt,bth->bh", weights, encoder_states), weights
