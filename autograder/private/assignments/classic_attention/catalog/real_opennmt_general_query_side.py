"""
correct: OpenNMT's "general" score with the linear map applied on the query side (s W, then a bmm with the source states), weights through masked_softmax
functions: [general_attention]
questions: []
source: OpenNMT-py, onmt/modules/global_attention.py (GlobalAttention.score, attn_type "general": h_t_ = self.linear_in(h_t) then torch.bmm(h_t, h_s.transpose(1, 2))), https://github.com/OpenNMT/OpenNMT-py/blob/master/onmt/modules/global_attention.py
idiom: project the target (query) state once instead of every source state, then one batched matrix product against the transposed memory bank; context by torch.bmm(align, memory_bank)
"""
import torch


def general_attention(decoder_state, encoder_states, W, mask=None):
    h_t = (decoder_state @ W).unsqueeze(1)  # (B, 1, d_h): s^T W
    align = torch.bmm(h_t, encoder_states.transpose(1, 2)).squeeze(1)  # (B, T)
    weights = masked_softmax(align, mask, dim=-1)
    context = torch.bmm(weights.unsqueeze(1), encoder_states).squeeze(1)
    return context, weights
