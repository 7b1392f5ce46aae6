"""Hidden tests: general_attention (Luong general)."""
import math

from autograder.private.suites import checks as c
from autograder.private.suites.classic_attention.family import *  # noqa: F401,F403 - the test families
from autograder.private.solutions import classic_attention as ref

QUESTION = "general_attention"
SPEC = {
    "name": "general_attention",
    "ref": ref.general_attention,
    "params": lambda d_s, d_h, d_attn, seed: [c.randn((d_s, d_h), seed, scale=0.5)],  # W (d_s, d_h)
}


def _alternatives(s, H, W):
    """(likely cause, scores) of the usual mistakes, from the inputs (for the failure message only)."""
    out = []
    if s.shape[-1] == H.shape[-1]:
        out += [("W is transposed: the score is s . (W h_i), W of shape (d_s, d_h).",
                 ((H @ W) * s.unsqueeze(1)).sum(-1)),
                ("W is not applied: that is Luong dot, general is s . (W h_i).", (H * s.unsqueeze(1)).sum(-1))]
    d = s.shape[-1]
    out.append(("the scores are divided by sqrt(d_s): Luong general attention is not scaled.",
                ((H @ W.T) * s.unsqueeze(1)).sum(-1) / math.sqrt(d)))
    return out


SPEC["alternatives"] = _alternatives
