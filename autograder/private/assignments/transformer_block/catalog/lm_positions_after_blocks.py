"""
bug: the positional encoding is added after the blocks (before ln_f) instead of to the embeddings before the first block
functions: [TransformerLM]
questions: [transformer_lm, training_run]
causes: [cause_tb_positions_after_blocks, cause_tb_run_positions, cause_tb_run_parts, cause_run_own_forward]
"""

from torch import nn


class TransformerLM(nn.Module):
    def __init__(self, vocab_size, d_model, n_heads, d_ff, n_layers):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.blocks = nn.ModuleList(DecoderBlock(d_model, n_heads, d_ff) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, tokens, pad_mask=None):
        x = self.embed(tokens)
        for block in self.blocks:
            x, _ = block(x, pad_mask)
        x = x + positional_encoding(tokens.shape[1], x.shape[-1], device=x.device, dtype=x.dtype)
        return self.head(self.ln_f(x))
