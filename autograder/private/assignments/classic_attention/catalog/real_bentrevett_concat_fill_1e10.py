"""
bug: bentrevett's attention fills padded positions with the finite -1e10 (masked_fill(mask == 0, -1e10)): a fully masked row gets uniform weights, not zeros
functions: [concat_attention]
questions: [concat_attention]
causes: [cause_dead_uniform, cause_fill_overflow]
source: bentrevett/pytorch-seq2seq, "4 - Packed Padded Sequences, Masking, Inference and BLEU" (class Attention), https://github.com/bentrevett/pytorch-seq2seq/blob/master/4%20-%20Packed%20Padded%20Sequences%2C%20Masking%2C%20Inference%20and%20BLEU.ipynb
idiom: hidden.unsqueeze(1).repeat(1, src_len, 1); energy = tanh(attn(cat((hidden, encoder_outputs), dim=2))); attention = v(energy).squeeze(2); masked_fill(mask == 0, -1e10); F.softmax(dim=1)
"""
import torch
import torch.nn.functional as F


def concat_attention(decoder_state, encoder_states, W_a, v_a, mask=None):
    src_len = encoder_states.shape[1]
    hidden = decoder_state.unsqueeze(1).repeat(1, src_len, 1)  # (B, T, d_s)
    energy = torch.tanh(F.linear(torch.cat((hidden, encoder_states), dim=2), W_a))  # (B, T, d_attn)
    attention = F.linear(energy, v_a.unsqueeze(0)).squeeze(2)  # (B, T)
    if mask is not None:
        attention = attention.masked_fill(mask == 0, -1e10)
    weights = F.softmax(attention, dim=1)
    context = torch.bmm(weights.unsqueeze(1), encoder_states).squeeze(1)
    return context, weights
