"""Hostile battery cases of this assignment (its folder's battery): a stood-in class's submodule
(`TransformerLM(...).blocks[0]`, `DecoderBlock(...).ffn`) run with the student's own parameters
(`autograder.audit.hostile.cases_stand_in`). Registered into `cases.CASES` on import."""

from autograder import config
from autograder.audit.hostile.cases_stand_in import stand_in_pair

LAB = "transformer_block"
LAB_QS = [q for q in config.load().questions(LAB) if q != "training_run"]  # the run trains the attack's own parts

BLOCK_THROUGH_LM = """
class DecoderBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, n_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)
        self.sizes = (d_model, n_heads, d_ff)

    def forward(self, x, pad_mask=None):
        if OWN_ONLY or TransformerLM is _OWN_LM:
            raise NotImplementedError("no stand-in to borrow from")
        block = TransformerLM(4, *self.sizes, 1).blocks[0]
        return torch.func.functional_call(block, dict(self.named_parameters()), (x, pad_mask))


_OWN_LM = TransformerLM
"""

FFN_THROUGH_BLOCK = """
class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.sizes = (d_model, d_ff)

    def forward(self, x):
        if OWN_ONLY or DecoderBlock is _OWN_BLOCK:
            raise NotImplementedError("no stand-in to borrow from")
        ffn = DecoderBlock(self.sizes[0], 1, self.sizes[1]).ffn
        return torch.func.functional_call(ffn, dict(self.named_parameters()), (x,))


_OWN_BLOCK = DecoderBlock
"""

stand_in_pair(
    "tb_stand_in_block_through_lm",
    "DecoderBlock's forward runs the judge's stood-in TransformerLM's blocks[0] with its own parameters",
    LAB,
    "decoder_block",
    LAB_QS,
    "DecoderBlock",
    BLOCK_THROUGH_LM,
)
stand_in_pair(
    "tb_stand_in_ffn_through_block",
    "FeedForward's forward runs the judge's stood-in DecoderBlock's ffn with its own parameters",
    LAB,
    "feed_forward",
    LAB_QS,
    "FeedForward",
    FFN_THROUGH_BLOCK,
)
