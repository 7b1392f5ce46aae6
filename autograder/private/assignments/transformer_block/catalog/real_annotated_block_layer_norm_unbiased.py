"""
bug: the Annotated Transformer's LayerNorm and SublayerConnection: the residual order is right (the norm first, x + sublayer(norm(x))), but its norm divides by the unbiased standard deviation plus eps, which is not nn.LayerNorm's sqrt(biased variance + eps)
functions: [DecoderBlock]
questions: [decoder_block]
causes: [cause_tb_ln_unbiased, cause_tb_run_parts]
source: harvardnlp, The Annotated Transformer (LayerNorm.forward: a_2 * (x - mean) / (std + eps) + b_2; SublayerConnection.forward: x + dropout(sublayer(norm(x)))), https://nlp.seas.harvard.edu/annotated-transformer/
idiom: x.std(-1, keepdim=True) (unbiased by default) and eps added to the std, the gain and bias of the contract's nn.LayerNorm reused
"""

from torch import nn


class DecoderBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model, eps=1e-6)
        self.attn = MultiHeadAttention(d_model, n_heads)
        self.ln2 = nn.LayerNorm(d_model, eps=1e-6)
        self.ffn = FeedForward(d_model, d_ff)

    @staticmethod
    def _norm(ln, x):
        mean = x.mean(-1, keepdim=True)
        std = x.std(-1, keepdim=True)
        return ln.weight * (x - mean) / (std + ln.eps) + ln.bias

    def _sublayer(self, x, ln, sublayer):
        return x + sublayer(self._norm(ln, x))

    def forward(self, x, pad_mask=None):
        T = x.shape[1]
        mask = causal_mask(T, device=x.device)
        if pad_mask is not None:
            mask = mask & pad_mask[:, None, None, :]
        out = {}

        def attend(h):
            attended, out["weights"] = self.attn(h, h, h, mask)
            return attended

        x = self._sublayer(x, self.ln1, attend)
        x = self._sublayer(x, self.ln2, self.ffn)
        return x, out["weights"]
