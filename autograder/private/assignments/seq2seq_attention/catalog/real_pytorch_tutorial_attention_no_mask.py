"""
bug: the attention has no padding mask: the softmax runs over every source position, padding included
functions: [AttentionDecoder]
questions: [attention_decoder, training_run]
causes: [cause_mask_ignored, cause_lab_run_parts]
source: PyTorch tutorials, NLP From Scratch: Translation with a Sequence to Sequence Network and Attention, classes BahdanauAttention and AttnDecoderRNN.forward_step, https://pytorch.org/tutorials/intermediate/seq2seq_translation_tutorial.html
idiom: scores = Va(tanh(Wa(query) + Ua(keys))); weights = F.softmax(scores, dim=-1); context = torch.bmm(weights, keys); input_gru = torch.cat((embedded, context), dim=2) with the previous hidden state as the query; no mask anywhere (its batches pad with EOS); here with the contract's W_a, U_a, v_a and out on [new state; context]
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
        query = state.unsqueeze(1)  # (B, 1, H)
        scores = torch.tanh(query @ self.W_a.T + encoder_states @ self.U_a.T) @ self.v_a  # (B, T)
        weights = F.softmax(scores.unsqueeze(1), dim=-1)  # (B, 1, T)
        context = torch.bmm(weights, encoder_states).squeeze(1)  # (B, H)
        new_state = self.gru(torch.cat((embedded, context), dim=-1), state)
        return self.out(torch.cat([new_state, context], dim=-1)), new_state, weights.squeeze(1)
