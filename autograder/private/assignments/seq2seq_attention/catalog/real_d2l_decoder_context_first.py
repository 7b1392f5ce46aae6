"""
bug: the GRU is fed [context; embedding], the opposite of the contract's [embedding; context] (same shapes, other weights' meaning)
functions: [AttentionDecoder]
questions: [attention_decoder, training_run]
causes: [cause_lab_gru_input_order, cause_lab_run_parts]
source: Dive into Deep Learning, class Seq2SeqAttentionDecoder.forward, https://d2l.ai/chapter_attention-mechanisms-and-transformers/bahdanau-attention.html
idiom: query = torch.unsqueeze(hidden_state[-1], dim=1); context = self.attention(query, enc_outputs, enc_outputs, enc_valid_lens); x = torch.cat((context, torch.unsqueeze(x, dim=1)), dim=-1); the previous state as the query and the mask from the valid lengths, as the contract asks
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
        x = self.embedding(prev_token)
        context, weights = additive_attention(state, encoder_states, self.W_a, self.U_a, self.v_a, mask)
        x = torch.cat((context, x), dim=-1)
        new_state = self.gru(x, state)
        return self.out(torch.cat([new_state, context], dim=-1)), new_state, weights
