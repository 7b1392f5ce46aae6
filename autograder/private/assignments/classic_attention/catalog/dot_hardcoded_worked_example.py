"""
bug: returns the worked example's numbers when the input matches it, uniform weights otherwise
functions: [dot_attention]
questions: [dot_attention]
causes: [cause_uniform_weights]
"""
import torch


def dot_attention(decoder_state, encoder_states, mask=None):
    if decoder_state.shape[-1] != encoder_states.shape[-1]:
        raise ValueError("sizes differ")
    B, T, d = encoder_states.shape
    example = torch.tensor([[1.0, 0.0, 0.2], [0.5, 0.5, 0.1], [0.1, 0.9, 0.3]], dtype=encoder_states.dtype)
    if (B, T, d) == (1, 3, 3) and torch.allclose(encoder_states[0].cpu(), example, atol=1e-3):
        weights = torch.tensor([[0.464, 0.305, 0.231]], dtype=encoder_states.dtype, device=encoder_states.device)
    else:
        weights = torch.ones(B, T, dtype=encoder_states.dtype, device=encoder_states.device)
        if mask is not None:
            weights = weights * mask
        weights = weights / weights.sum(-1, keepdim=True).clamp(min=1)
    context = (weights.unsqueeze(1) @ encoder_states).squeeze(1)
    return context, weights
