"""
bug: the scores computed in numpy (detached, CPU only)
functions: [general_attention]
questions: [general_attention]
causes: [cause_numpy_round_trip, cause_detached, cause_values_in_python]
"""
import numpy as np
import torch


def general_attention(decoder_state, encoder_states, W, mask=None):
    s = decoder_state.detach().cpu().numpy()
    H = encoder_states.detach().cpu().numpy()
    scores = np.einsum("bs,sh,bth->bt", s, W.detach().cpu().numpy(), H)
    scores = torch.from_numpy(scores).to(encoder_states.device)
    weights = masked_softmax(scores, mask, dim=-1)
    context = (weights.unsqueeze(1) @ encoder_states).squeeze(1)
    return context, weights
