"""
bug: the embedding is detached (a .detach() left from debugging): no gradient reaches embedding.weight
functions: [AttentionDecoder]
questions: [attention_decoder]
causes: [cause_lab_parameter_unused]
"""
import math

import torch
from torch import nn


class AttentionDecoder(nn.Module):
    def __init__(self, vocab_size, emb_dim, hidden_dim, attn_dim):
        super().__init__()
        bound = 1 / math.sqrt(hidden_dim)
        self.embedding = nn.Embedding(vocab_size, emb_dim)
        self.W_a = nn.Parameter(torch.empty(attn_dim, hidden_dim).uniform_(-bound, bound))
        self.U_a = nn.Parameter(torch.empty(attn_dim, hidden_dim).uniform_(-bound, bound))
        self.v_a = nn.Parameter(torch.empty(attn_dim).uniform_(-bound, bound))
        self.gru = nn.GRUCell(emb_dim + hidden_dim, hidden_dim)
        self.out = nn.Linear(2 * hidden_dim, vocab_size)

    def forward(self, prev_token, state, encoder_states, mask):
        embedded = self.embedding(prev_token).detach()
        context, weights = additive_attention(state, encoder_states, self.W_a, self.U_a, self.v_a, mask)
        new_state = self.gru(torch.cat([embedded, context], dim=-1), state)
        return self.out(torch.cat([new_state, context], dim=-1)), new_state, weights
