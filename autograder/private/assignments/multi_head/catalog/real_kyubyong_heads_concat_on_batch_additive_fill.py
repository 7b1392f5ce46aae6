"""
bug: Kyubyong's transformer splits the features into heads and stacks them on the batch axis (h*N, ...), tiles the key mask the same way and adds mask * (-2**32 + 1) to the scores: a finite fill, so a batch row with no real token gets uniform weights and the mean context in every head (in float16 the fill overflows to -inf: NaN)
functions: [multi_head_general_attention]
questions: [multi_head_general_attention]
causes: [cause_dead_additive_mask, cause_dead_uniform]
source: Kyubyong Park, transformer, modules.py (multihead_attention: Q_ = tf.concat(tf.split(Q, num_heads, axis=2), axis=0); outputs = tf.concat(tf.split(outputs, num_heads, axis=0), axis=2); mask: padding_num = -2 ** 32 + 1, tf.tile(key_masks, [h, 1]), inputs + key_masks * padding_num), https://github.com/Kyubyong/transformer/blob/master/modules.py
idiom: torch.cat(torch.split(x, d_head, dim=-1), dim=0) folds the heads into the batch head-major; the (B, T) padding mask repeated n_heads times along the batch and added as a large finite negative number; softmax; torch.cat(torch.split(y, B, dim=0), dim=-1) puts the heads back
"""
import torch


def multi_head_general_attention(decoder_state, encoder_states, W, n_heads, mask=None):
    B, T, d_h = encoder_states.shape
    if n_heads < 1 or d_h % n_heads:
        raise ValueError("n_heads must be a positive divisor of d_h")
    d = d_h // n_heads
    H_ = torch.cat(torch.split(encoder_states, d, dim=2), dim=0)  # (h*B, T, d)
    W_ = torch.cat(torch.split(W.unsqueeze(0), d, dim=2), dim=0)  # (h, d_s, d)
    q_ = (decoder_state.unsqueeze(0) @ W_).reshape(n_heads * B, d)  # (h*B, d): s W_k, head-major
    scores = (H_ @ q_.unsqueeze(-1)).squeeze(-1)  # (h*B, T)
    if mask is not None:
        padding = (~mask).to(scores.dtype).repeat(n_heads, 1)  # (h*B, T), 1 where padded
        scores = scores + padding * (-2 ** 32 + 1)
    weights = torch.softmax(scores, dim=-1)  # (h*B, T)
    context = (weights.unsqueeze(1) @ H_).squeeze(1)  # (h*B, d)
    context = torch.cat(torch.split(context, B, dim=0), dim=1)  # (B, d_h)
    return context, torch.stack(torch.split(weights, B, dim=0), dim=1)  # (B, h, T)
