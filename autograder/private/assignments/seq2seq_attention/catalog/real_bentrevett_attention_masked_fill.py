"""
correct: the attention written inline as bentrevett's Attention does it: masked_fill(mask == 0, -1e10) on the energies, then softmax (exp(-1e10) is exactly 0 in float32 and float64), context by bmm
functions: [AttentionDecoder]
questions: []
source: bentrevett/pytorch-seq2seq, 4 - Packed Padded Sequences, Masking, Inference and BLEU, classes Attention and Decoder, https://github.com/bentrevett/pytorch-seq2seq
idiom: energy = torch.tanh(self.attn(torch.cat((hidden, encoder_outputs), dim=2))); attention = self.v(energy).squeeze(2); attention = attention.masked_fill(mask == 0, -1e10); F.softmax(attention, dim=1); weighted = torch.bmm(a, encoder_outputs); the previous hidden state as the query; here the attn layer split into the contract's W_a (state) and U_a (encoder states)
"""
import math

import torch
from torch import nn
import torch.nn.functional as F


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
        src_len = encoder_states.shape[1]
        hidden = state.unsqueeze(1).repeat(1, src_len, 1)  # (B, T, H)
        energy = torch.tanh(hidden @ self.W_a.T + encoder_states @ self.U_a.T)  # (B, T, A)
        attention = (energy @ self.v_a).masked_fill(mask == 0, -1e10)  # (B, T)
        a = F.softmax(attention, dim=1)
        weighted = torch.bmm(a.unsqueeze(1), encoder_states).squeeze(1)  # (B, H)
        new_state = self.gru(torch.cat((embedded, weighted), dim=1), state)
        return self.out(torch.cat((new_state, weighted), dim=1)), new_state, a
