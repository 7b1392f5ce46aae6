"""
bug: pack_padded_sequence with its default enforce_sorted=True: a batch whose lengths are not in decreasing order raises
functions: [Encoder]
questions: [encoder, training_run]
causes: [cause_lab_enforce_sorted]
source: bentrevett/pytorch-seq2seq, 4 - Packed Padded Sequences, Masking, Inference and BLEU, class Encoder (its iterator sorts each batch by length: sort_within_batch=True), https://github.com/bentrevett/pytorch-seq2seq
idiom: packed_embedded = pack_padded_sequence(embedded, src_len.to('cpu')); packed_outputs, hidden = self.rnn(packed_embedded); outputs, _ = pad_packed_sequence(packed_outputs); here batch_first, one direction
"""
from torch import nn


class Encoder(nn.Module):
    def __init__(self, vocab_size, emb_dim, hidden_dim):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim)
        self.gru = nn.GRU(emb_dim, hidden_dim, batch_first=True)

    def forward(self, src, src_lengths):
        embedded = self.embedding(src)
        packed_embedded = nn.utils.rnn.pack_padded_sequence(embedded, src_lengths.to("cpu"), batch_first=True)
        packed_outputs, hidden = self.gru(packed_embedded)
        outputs, _ = nn.utils.rnn.pad_packed_sequence(packed_outputs, batch_first=True, total_length=src.shape[1])
        return outputs, hidden[0]
