"""
bug: pad_packed_sequence without total_length: the states stop at the batch's longest length, not at src's T
functions: [Encoder]
questions: [encoder]
causes: [cause_lab_total_length]
"""
from torch import nn


class Encoder(nn.Module):
    def __init__(self, vocab_size, emb_dim, hidden_dim):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim)
        self.gru = nn.GRU(emb_dim, hidden_dim, batch_first=True)

    def forward(self, src, src_lengths):
        packed = nn.utils.rnn.pack_padded_sequence(self.embedding(src), src_lengths.cpu(), batch_first=True,
                                                   enforce_sorted=False)
        out, h = self.gru(packed)
        states, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
        return states, h[0]
