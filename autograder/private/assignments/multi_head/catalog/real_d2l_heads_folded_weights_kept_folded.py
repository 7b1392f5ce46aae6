"""
bug: d2l's transpose_qkv / transpose_output: the heads folded into the batch, the valid lengths repeated with repeat_interleave, the outputs unfolded again, but the weights returned as d2l keeps them, folded: (B*n_heads, T), not (B, n_heads, T)
functions: [multi_head_general_attention]
questions: [multi_head_general_attention]
causes: [cause_axes_folded, cause_mhl_weights_no_head_axis]
source: Dive into Deep Learning, section "Multi-Head Attention" (transpose_qkv, transpose_output, valid_lens = torch.repeat_interleave(valid_lens, repeats=self.num_heads, dim=0), attention_weights of shape (batch_size * num_heads, ...)), https://d2l.ai/chapter_attention-mechanisms-and-transformers/multihead-attention.html
idiom: X.reshape(X.shape[0], X.shape[1], num_heads, -1).permute(0, 2, 1, 3).reshape(-1, X.shape[1], X.shape[3]); torch.repeat_interleave(mask, repeats=num_heads, dim=0); the output reshaped back with reshape(-1, num_heads, ...).permute(0, 2, 1, 3)
"""
import torch


def multi_head_general_attention(decoder_state, encoder_states, W, n_heads, mask=None):
    def transpose_qkv(X, num_heads):
        X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)
        X = X.permute(0, 2, 1, 3)
        return X.reshape(-1, X.shape[2], X.shape[3])

    B, T, d_h = encoder_states.shape
    if n_heads < 1 or d_h % n_heads:
        raise ValueError("n_heads must divide d_h")
    H = transpose_qkv(encoder_states, n_heads)  # (B*n, T, d)
    q = transpose_qkv((decoder_state @ W).unsqueeze(1), n_heads)  # (B*n, 1, d): s W_k per head
    scores = (q @ H.transpose(1, 2)).squeeze(1)  # (B*n, T)
    if mask is not None:
        mask = torch.repeat_interleave(mask, repeats=n_heads, dim=0)  # (B*n, T)
    attention_weights = masked_softmax(scores, mask, dim=-1)
    out = (attention_weights.unsqueeze(1) @ H).squeeze(1)  # (B*n, d)
    out = out.reshape(-1, n_heads, out.shape[-1])  # (B, n, d)
    return out.reshape(out.shape[0], -1), attention_weights
