"""Hidden tests: additive_attention (Bahdanau)."""
from autograder.suites import checks as c
from autograder.suites.classic_attention.family import *  # noqa: F401,F403 - the test families
from solutions import classic_attention as ref

QUESTION = "additive_attention"
SPEC = {
    "name": "additive_attention",
    "ref": ref.additive_attention,
    # W_a (d_attn, d_s), U_a (d_attn, d_h), v_a (d_attn,)
    "params": lambda d_s, d_h, d_attn, seed: [
        c.randn((d_attn, d_s), seed), c.randn((d_attn, d_h), seed + 1), c.randn((d_attn,), seed + 2)],
}
