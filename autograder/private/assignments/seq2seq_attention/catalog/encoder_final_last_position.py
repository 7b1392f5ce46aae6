"""
bug: final is the padded output's last position (states[:, -1]), zeros for every row shorter than the batch
functions: [Encoder]
questions: [encoder, training_run]
causes: [cause_lab_final_after_padding, cause_lab_run_parts]
example: true
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
        out, _ = self.gru(packed)
        states, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=src.shape[1])
        return states, states[:, -1]
