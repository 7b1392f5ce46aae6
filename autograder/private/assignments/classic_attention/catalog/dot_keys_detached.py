"""
bug: the keys are detached in the scores (`encoder_states.detach()`, as a key cache built for inference is): the outputs are right, but the gradient reaching the encoder states misses the path through the scores
functions: [dot_attention]
questions: [dot_attention]
causes: [cause_gradient_path_cut]
"""


def dot_attention(decoder_state, encoder_states, mask=None):
    if decoder_state.shape[-1] != encoder_states.shape[-1]:
        raise ValueError("dot attention needs d_s == d_h")
    keys = encoder_states.detach()  # "a cache of keys"
    scores = (keys @ decoder_state.unsqueeze(-1)).squeeze(-1)
    weights = masked_softmax(scores, mask, dim=-1)
    context = (weights.unsqueeze(1) @ encoder_states).squeeze(1)
    return context, weights
