"""
bug: the head built with nn.Linear's default bias (the word-language-model example's decoder): a parameter, head.bias, the contract does not have and the grader does not load
functions: [TransformerLM]
questions: [transformer_lm, training_run]
causes: [cause_tb_extra_parameter, cause_tb_parameter_names]
source: pytorch/examples, word_language_model/model.py (TransformerModel.__init__: self.decoder = nn.Linear(ninp, ntoken)), https://github.com/pytorch/examples/blob/main/word_language_model/model.py
idiom: self.head = nn.Linear(d_model, vocab_size)
"""

from torch import nn


class TransformerLM(nn.Module):
    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.blocks = nn.ModuleList(DecoderBlock(d_model, n_heads, d_ff) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, tokens, pad_mask=None):
        x = self.embed(tokens)
        x = x + positional_encoding(x.size(1), x.size(-1), device=x.device, dtype=x.dtype)
        for block in self.blocks:
            x, _ = block(x, pad_mask)
        return self.head(self.ln_f(x))
