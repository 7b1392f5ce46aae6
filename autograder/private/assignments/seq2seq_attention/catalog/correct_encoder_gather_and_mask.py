"""
correct: the GRU over the whole padded batch (a unidirectional GRU's states at real positions do not see the padding after them), then the padded states zeroed with the mask and final gathered at length - 1
functions: [Encoder]
questions: []
"""
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, vocab_size, emb_dim, hidden_dim):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim)
        self.gru = nn.GRU(emb_dim, hidden_dim, batch_first=True)

    def forward(self, src, src_lengths):
        out, _ = self.gru(self.embedding(src))  # (B, T, H)
        real = torch.arange(src.shape[1]) < src_lengths[:, None]  # (B, T)
        states = out * real.unsqueeze(-1).to(out.dtype)
        final = out[torch.arange(src.shape[0]), src_lengths - 1]
        return states, final
