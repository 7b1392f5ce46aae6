"""Hidden tests: concat_attention (Luong concat)."""
from autograder.suites import checks as c
from autograder.suites.classic_attention.family import *  # noqa: F401,F403 - the test families
from solutions import classic_attention as ref

QUESTION = "concat_attention"
SPEC = {
    "name": "concat_attention",
    "ref": ref.concat_attention,
    # W_a (d_attn, d_s + d_h), the decoder state's columns first; v_a (d_attn,)
    "params": lambda d_s, d_h, d_attn, seed: [c.randn((d_attn, d_s + d_h), seed), c.randn((d_attn,), seed + 1)],
}
