"""
bug: the GRU runs over the whole padded batch (no packing): states are not 0 at padding and final is the state after the padding
functions: [Encoder]
questions: [encoder, training_run]
causes: [cause_lab_states_not_zeroed, cause_lab_final_after_padding, cause_lab_gru_reads_padding, cause_lab_run_parts]
source: Dive into Deep Learning, class Seq2SeqEncoder (output, state = self.rnn(X) on the padded batch; valid_len used only by the loss and the attention), https://d2l.ai/chapter_recurrent-modern/seq2seq.html
idiom: embed, run the GRU on every position, return (outputs, state) as they come; here batch_first and the final layer's state
"""
from torch import nn


class Encoder(nn.Module):
    def __init__(self, vocab_size, emb_dim, hidden_dim):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim)
        self.gru = nn.GRU(emb_dim, hidden_dim, batch_first=True)

    def forward(self, src, src_lengths):
        output, state = self.gru(self.embedding(src))  # (B, T, H), (1, B, H)
        return output, state[-1]
