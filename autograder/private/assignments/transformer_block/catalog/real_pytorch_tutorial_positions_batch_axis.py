"""
bug: the positional encoding added along the batch axis: PyTorch's tutorial adds pe[:x.size(0)] to a sequence-first (T, B, D) input; on this batch-first (B, T, D) input x.size(0) is the batch, so row b gets position b's encoding at every token
functions: [TransformerLM]
questions: [transformer_lm, training_run]
causes: [cause_tb_positions_batch_axis, cause_run_own_forward]
source: pytorch/tutorials, Language Modeling with nn.Transformer (PositionalEncoding.forward: x = x + self.pe[:x.size(0)], x of shape [seq_len, batch_size, embedding_dim]), https://pytorch.org/tutorials/beginner/transformer_tutorial.html
idiom: x = x + pe[: x.size(0)] with pe of shape (max_len, 1, d_model)
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
        pe = positional_encoding(x.size(0), x.size(-1), device=x.device, dtype=x.dtype).unsqueeze(1)
        x = x + pe[: x.size(0)]
        for block in self.blocks:
            x, _ = block(x, pad_mask)
        return self.head(self.ln_f(x))
