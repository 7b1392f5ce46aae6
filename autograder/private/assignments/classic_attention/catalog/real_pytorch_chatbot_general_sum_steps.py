"""
bug: the chatbot tutorial's general score carried over to every decoder step: the elementwise product of the decoder states and the projected encoder states summed over features, which broadcasts only when T_dec == T_enc (then each step meets one key) or T_dec == 1
functions: [fixed_general_attention]
questions: [fixed_general_attention]
causes: [cause_broadcast]
source: PyTorch tutorials, "Chatbot Tutorial" (class Attn, general_score), https://pytorch.org/tutorials/beginner/chatbot_tutorial.html
idiom: energy = self.attn(encoder_output); torch.sum(hidden * energy, dim=2): right for one decoder step, wrong for T_dec of them
"""
import torch.nn.functional as F


def fixed_general_attention(decoder_states, encoder_states, W, mask=None):
    energy = F.linear(encoder_states, W)  # (B, T_enc, d_s)
    scores = (decoder_states * energy).sum(dim=2)  # needs T_dec == T_enc: (B, T)
    scores = scores.unsqueeze(1).expand(-1, decoder_states.shape[1], -1)  # (B, T_dec, T_enc) "fixed up"
    if mask is not None:
        mask = mask.unsqueeze(1)
    weights = masked_softmax(scores, mask, dim=-1)
    return weights @ encoder_states, weights
