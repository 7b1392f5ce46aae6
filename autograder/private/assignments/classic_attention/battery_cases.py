"""Hostile battery cases of this assignment (its folder's battery): controls and attacks on a
classic_attention notebook. Registered into `cases.CASES` on import."""

from autograder import config
from autograder.audit.hostile.cases import (
    append,
    case,
    ipynb,
    others_of,
    reference,
    replace_function,
)

CLASSIC = "classic_attention"
# classic_attention's questions and total from grading.yml (the shapes drill's three included)
CLASSIC_POINTS = config.load().questions(CLASSIC)
CLASSIC_QS = tuple(CLASSIC_POINTS)
CLASSIC_FULL = sum(CLASSIC_POINTS.values())


@case(
    "classic_reference",
    "the correct classic-attention notebook (control)",
    assignment=CLASSIC,
    max_score=CLASSIC_FULL,
    questions_keep_full=list(CLASSIC_QS),
)
def _():
    return ipynb(reference(CLASSIC))


@case(
    "classic_loop_in_concat",
    "classic attention: an infinite loop inside concat_attention",
    assignment=CLASSIC,
    max_score=CLASSIC_FULL - CLASSIC_POINTS["concat_attention"],
    questions_zero=["concat_attention"],
    questions_keep_full=others_of(CLASSIC_QS, "concat_attention"),
    reason_contains=["CPU time limit", "timed out"],
)
def _():
    return ipynb(
        replace_function(
            reference(CLASSIC, demo=False),
            "concat_attention",
            "def concat_attention(*args, **kwargs):\n    while True:\n        pass\n",
        )
    )


@case(
    "classic_alloc_in_general",
    "classic attention: general_attention allocates 20 GB",
    assignment=CLASSIC,
    max_score=CLASSIC_FULL - CLASSIC_POINTS["general_attention"],
    questions_zero=["general_attention"],
    questions_keep_full=others_of(CLASSIC_QS, "general_attention"),
    reason_contains=["general_attention"],
)
def _():
    return ipynb(
        replace_function(
            reference(CLASSIC, demo=False),
            "general_attention",
            ("def general_attention(*args, **kwargs):\n    return torch.ones(20 * 2**30, dtype=torch.uint8)\n"),
        )
    )


@case(
    "classic_patch_softmax",
    "classic attention: a last cell replaces torch.softmax, F.softmax and Tensor.softmax with a uniform average",
    assignment=CLASSIC,
    max_score=CLASSIC_FULL,
    not_above="classic_reference",
)
def _():
    return ipynb(
        append(
            reference(CLASSIC),
            (
                "import torch.nn.functional as F\n"
                "def _uniform(x, dim=-1, *a, **k):\n    return torch.ones_like(x) / x.shape[dim]\n"
                "torch.softmax = F.softmax = _uniform\ntorch.Tensor.softmax = _uniform\n"
            ),
        )
    )


@case(
    "stand_in_stashed",
    "classic attention: dot_attention keeps the judge's stand-in for masked_softmax in a "
    "global, and masked_softmax answers through it (to get the reference's values)",
    assignment=CLASSIC,
    max_score=CLASSIC_FULL - 0.01,
    questions_lose=["masked_softmax"],
    questions_keep_full=others_of(CLASSIC_QS, "masked_softmax"),
    reason_contains=["answers no such call"],
)
def _():
    nb = replace_function(
        reference(CLASSIC, demo=False),
        "dot_attention",
        (
            "_STASH = []\n\n"
            "def dot_attention(decoder_state, encoder_states, mask=None):\n"
            "    _STASH.append(masked_softmax)\n"
            "    if decoder_state.shape[-1] != encoder_states.shape[-1]:\n"
            "        raise ValueError('d_s and d_h differ')\n"
            "    scores = (encoder_states @ decoder_state.unsqueeze(-1)).squeeze(-1)\n"
            "    weights = masked_softmax(scores, mask, dim=-1)\n"
            "    return (weights.unsqueeze(1) @ encoder_states).squeeze(1), weights\n"
        ),
    )
    return ipynb(
        replace_function(
            nb,
            "masked_softmax",
            (
                "def masked_softmax(scores, mask=None, dim=-1):\n"
                "    for f in reversed(_STASH):\n"
                "        return f(scores, mask, dim)\n"
                "    return torch.zeros_like(scores)\n"
            ),
        )
    )


@case(
    "stand_in_flood",
    "classic attention: dot_attention calls masked_softmax 1000 times per call (each "
    "one answered by the judge's stand-in: four times MAX_CALLBACKS)",
    assignment=CLASSIC,
    max_score=CLASSIC_FULL - 0.01,
    questions_lose=["dot_attention"],
    questions_keep_full=others_of(CLASSIC_QS, "dot_attention"),
    reason_contains=["calls to graded functions"],
)
def _():
    return ipynb(
        replace_function(
            reference(CLASSIC, demo=False),
            "dot_attention",
            (
                "def dot_attention(decoder_state, encoder_states, mask=None):\n"
                "    if decoder_state.shape[-1] != encoder_states.shape[-1]:\n"
                "        raise ValueError('d_s and d_h differ')\n"
                "    scores = (encoder_states @ decoder_state.unsqueeze(-1)).squeeze(-1)\n"
                # past MAX_CALLBACKS (256) while few enough that the notebook's own cells, which
                # call it with the student's masked_softmax, load in a second: the case weighs
                # the stand-in's flood, not the load limit (`slow_every_call` does)
                "    for _ in range(1000):\n"
                "        weights = masked_softmax(scores, mask, dim=-1)\n"
                "    return (weights.unsqueeze(1) @ encoder_states).squeeze(1), weights\n"
            ),
        )
    )


@case(
    "stand_in_broadcast",
    "classic attention: dot_attention asks the judge's stand-in for masked_softmax of a "
    "(20000, 1) score against a (1, 20000) mask (3.2 GB once broadcast), then answers correctly",
    assignment=CLASSIC,
    max_score=CLASSIC_FULL - 0.01,
    questions_lose=["dot_attention"],
    questions_keep_full=others_of(CLASSIC_QS, "dot_attention"),
    reason_contains=["over the"],
)
def _():
    return ipynb(
        replace_function(
            reference(CLASSIC, demo=False),
            "dot_attention",
            (
                "def dot_attention(decoder_state, encoder_states, mask=None):\n"
                "    masked_softmax(torch.zeros(20000, 1, dtype=torch.float64), torch.ones(1, 20000, dtype=torch.bool))\n"
                "    if decoder_state.shape[-1] != encoder_states.shape[-1]:\n"
                "        raise ValueError('d_s and d_h differ')\n"
                "    scores = (encoder_states @ decoder_state.unsqueeze(-1)).squeeze(-1)\n"
                "    weights = masked_softmax(scores, mask, dim=-1)\n"
                "    return (weights.unsqueeze(1) @ encoder_states).squeeze(1), weights\n"
            ),
        )
    )
