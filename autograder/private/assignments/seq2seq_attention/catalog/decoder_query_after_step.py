"""
bug: Luong's order: the GRU steps first (fed zeros where the context goes) and its new state is the attention's query
functions: [AttentionDecoder]
questions: [attention_decoder, training_run]
causes: [cause_lab_query_after_step, cause_lab_run_parts]
example: true
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
        embedded = self.embedding(prev_token)
        new_state = self.gru(torch.cat([embedded, torch.zeros_like(state)], dim=-1), state)
        context, weights = additive_attention(new_state, encoder_states, self.W_a, self.U_a, self.v_a, mask)
        return self.out(torch.cat([new_state, context], dim=-1)), new_state, weights
