"""
bug: nanoGPT's weight tying: the embedding and the head share one matrix, so loading the contract's embed.weight and head.weight leaves both holding the same values
functions: [TransformerLM]
questions: [transformer_lm, training_run]
causes: [cause_tb_tied_head, cause_tb_run_parts, cause_run_own_forward]
source: karpathy/nanoGPT, model.py (GPT.__init__: self.transformer.wte.weight = self.lm_head.weight), https://github.com/karpathy/nanoGPT/blob/master/model.py
idiom: self.embed.weight = self.head.weight
"""

from torch import nn


class TransformerLM(nn.Module):
    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.blocks = nn.ModuleList(DecoderBlock(d_model, n_heads, d_ff) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)
        self.embed.weight = self.head.weight  # https://paperswithcode.com/method/weight-tying

    def forward(self, tokens, pad_mask=None):
        x = self.embed(tokens)
        x = x + positional_encoding(x.size(1), x.size(-1), device=x.device, dtype=x.dtype)
        for block in self.blocks:
            x, _ = block(x, pad_mask)
        return self.head(self.ln_f(x))
