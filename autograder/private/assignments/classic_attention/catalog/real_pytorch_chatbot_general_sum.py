"""
correct: the chatbot tutorial's general_score: the encoder outputs projected by W (a Linear(hidden, hidden)), then the sum of the elementwise product with the decoder state
functions: [general_attention]
questions: []
source: PyTorch tutorials, "Chatbot Tutorial" (class Attn, general_score), https://pytorch.org/tutorials/beginner/chatbot_tutorial.html
idiom: energy = self.attn(encoder_output); score = torch.sum(hidden * energy, dim=2); softmax over time (the kit's masked_softmax); context = weights.bmm(encoder_outputs)
"""
import torch
import torch.nn.functional as F


def general_attention(decoder_state, encoder_states, W, mask=None):
    energy = F.linear(encoder_states, W)  # (B, T, d_s): W h for every step
    energies = torch.sum(decoder_state.unsqueeze(1) * energy, dim=2)  # (B, T)
    weights = masked_softmax(energies, mask, dim=1)
    context = weights.unsqueeze(1).bmm(encoder_states).squeeze(1)
    return context, weights
