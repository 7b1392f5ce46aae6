"""
bug: the chatbot tutorial's concat_score path ends in F.softmax over every step with no mask, so padded encoder steps get weight
functions: [concat_attention]
questions: [concat_attention]
causes: [cause_mask_ignored]
source: PyTorch tutorials, "Chatbot Tutorial" (class Attn, concat_score and forward), https://pytorch.org/tutorials/beginner/chatbot_tutorial.html
idiom: energy = attn(cat((hidden.expand(...), encoder_output), 2)).tanh(); score = torch.sum(v * energy, dim=2); F.softmax(attn_energies, dim=1); context by bmm
"""
import torch
import torch.nn.functional as F


def concat_attention(decoder_state, encoder_states, W_a, v_a, mask=None):
    B, T, _ = encoder_states.shape
    hidden = decoder_state.unsqueeze(1).expand(B, T, -1)
    energy = F.linear(torch.cat((hidden, encoder_states), 2), W_a).tanh()  # (B, T, d_attn)
    attn_energies = torch.sum(v_a * energy, dim=2)  # (B, T)
    weights = F.softmax(attn_energies, dim=1)
    context = weights.unsqueeze(1).bmm(encoder_states).squeeze(1)
    return context, weights
