"""
correct: the fix applies W on the query side, (s W) . h, which is s . (W h): the same scores without transposing W
functions: [fixed_general_attention]
questions: []
"""


def fixed_general_attention(decoder_states, encoder_states, W, mask=None):
    queries = decoder_states @ W  # (B, T_dec, d_h)
    scores = queries @ encoder_states.transpose(1, 2)  # (B, T_dec, T_enc)
    if mask is not None:
        mask = mask.unsqueeze(1)
    weights = masked_softmax(scores, mask, dim=-1)
    return weights @ encoder_states, weights
