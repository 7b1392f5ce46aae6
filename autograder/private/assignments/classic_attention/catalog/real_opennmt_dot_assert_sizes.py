"""
bug: sizes checked with OpenNMT's aeq-style assert, so d_s != d_h raises AssertionError instead of the ValueError the contract asks for
functions: [dot_attention]
questions: [dot_attention]
causes: [cause_assert_sizes]
source: OpenNMT-py, onmt/modules/global_attention.py (GlobalAttention.score, attn_type "dot", with aeq from onmt/utils/misc.py), https://github.com/OpenNMT/OpenNMT-py/blob/master/onmt/modules/global_attention.py
idiom: unpack the batch/length/dim sizes of source and target, check them with assert equality, score with torch.bmm(h_t, h_s.transpose(1, 2)), context with torch.bmm(align, memory_bank)
"""
import torch


def dot_attention(decoder_state, encoder_states, mask=None):
    src_batch, src_len, src_dim = encoder_states.shape
    tgt_batch, tgt_dim = decoder_state.shape
    assert src_batch == tgt_batch, "batch sizes differ"
    assert src_dim == tgt_dim, "dot attention needs the same size on both sides"
    h_t = decoder_state.unsqueeze(1)  # (B, 1, d)
    align = torch.bmm(h_t, encoder_states.transpose(1, 2)).squeeze(1)  # (B, T)
    weights = masked_softmax(align, mask, dim=-1)
    context = torch.bmm(weights.unsqueeze(1), encoder_states).squeeze(1)
    return context, weights
