"""Hidden tests: general_attention (Luong general)."""
from autograder.suites import checks as c
from autograder.suites.classic_attention.family import *  # noqa: F401,F403 - the test families
from solutions import classic_attention as ref

QUESTION = "general_attention"
SPEC = {
    "name": "general_attention",
    "ref": ref.general_attention,
    "params": lambda d_s, d_h, d_attn, seed: [c.randn((d_s, d_h), seed, scale=0.5)],  # W (d_s, d_h)
}
