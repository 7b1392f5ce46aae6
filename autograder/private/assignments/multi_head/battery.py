"""Hostile battery cases of this assignment (its folder's battery): controls and attacks on a
multi_head notebook. Registered into `cases.CASES` on import."""

from autograder.audit.hostile.cases import (
    ROOT_WHY,
    _catalog_source,
    append,
    case,
    ipynb,
    others_of,
    reference,
    synthesized,
)

MULTI = "multi_head"
MULTI_QS = ("split_heads", "merge_heads", "multi_head_attention", "multi_head_general_attention")
MULTI_TOTAL = 14  # grading.yml: 2 + 2 + 6 + 4


@case(
    "multi_reference",
    "the correct multi-head notebook (control)",
    assignment=MULTI,
    max_score=MULTI_TOTAL,
    questions_keep_full=list(MULTI_QS),
)
def _():
    return ipynb(reference(MULTI))


@case(
    "synthesized_reference",
    "multi-head: the correct notebook built from solutions/ alone, as the "
    "battery builds its cases in an installed copy without examples/ (control)",
    assignment=MULTI,
    max_score=MULTI_TOTAL,
    questions_keep_full=list(MULTI_QS),
)
def _():
    return ipynb(synthesized(MULTI))


@case(
    "multi_fork_bomb_in_init",
    "multi-head: a fork bomb in MultiHeadAttention.__init__",
    assignment=MULTI,
    max_score=MULTI_TOTAL - 6,
    questions_zero=["multi_head_attention"],
    questions_keep_full=others_of(MULTI_QS, "multi_head_attention"),
    reason_contains=["fork bomb"],
    root_only=ROOT_WHY,
)
def _():
    nb = reference(MULTI, demo=False)
    return ipynb(
        append(
            nb,
            (
                "_Honest = MultiHeadAttention\n"
                "class MultiHeadAttention(_Honest):\n"
                "    def __init__(self, *a, **k):\n"
                "        import os\n"
                "        while True:\n"
                "            try:\n"
                "                os.fork()\n"
                "            except OSError:\n"
                "                pass\n"
            ),
        )
    )


@case(
    "multi_loop_heads",
    "multi-head: an honest Python loop over the heads (control: loses the vectorisation check)",
    assignment=MULTI,
    max_score=MULTI_TOTAL - 0.01,
    questions_lose=["multi_head_attention"],
    questions_keep_full=others_of(MULTI_QS, "multi_head_attention"),
)
def _():
    return ipynb(append(reference(MULTI), _catalog_source(MULTI, "mha_loop_over_heads")))


def _hidden_loop(switch_off):
    source = _catalog_source(MULTI, "mha_loop_over_heads").replace(
        "        outs, maps = [], []\n",
        f"        outs, maps = [], []\n        _off = {switch_off}\n        _off.__enter__()\n",
    )
    return ipynb(append(reference(MULTI), source))


@case(
    "multi_hide_loop_from_counter",
    "multi-head: the same loop over heads run inside "
    "torch._C.DisableTorchFunction(), hiding its operations from the vectorisation counter",
    assignment=MULTI,
    not_above="multi_loop_heads",
    max_score=MULTI_TOTAL - 0.01,
    reason_contains=["tracing internals"],
)
def _():
    return _hidden_loop("torch._C.DisableTorchFunction()")


@case(
    "multi_hide_loop_obfuscated",
    "multi-head: the same, with the names built from bytes at run time so that no check of the source can see them",
    assignment=MULTI,
    not_above="multi_loop_heads",
    max_score=MULTI_TOTAL - 0.01,
    gap="the vectorisation and from-scratch checks count torch calls inside the student's process; "
    "deliberately obfuscated code that switches the counter off there passes them (values, shapes, "
    "gradients, masks and dtypes are judged in the judge and are not affected)",
)
def _():
    return _hidden_loop(
        "getattr(getattr(torch, bytes([95, 67]).decode()), bytes([68, 105, 115, 97, 98, 108, 101, 84, "
        "111, 114, 99, 104, 70, 117, 110, 99, 116, 105, 111, 110]).decode())()"
    )


@case(
    "multi_general_scaled",
    "multi-head general attention scaled by sqrt(d_head) (control: an honest bug, "
    "it loses points on that question only)",
    assignment=MULTI,
    max_score=MULTI_TOTAL - 0.01,
    questions_lose=["multi_head_general_attention"],
    questions_keep_full=others_of(MULTI_QS, "multi_head_general_attention"),
)
def _():
    return ipynb(append(reference(MULTI, demo=False), _catalog_source(MULTI, "mhl_scaled_by_sqrt_d_head")))


@case(
    "multi_general_rebinds_yardstick",
    "the same bug, and the provided general_attention rebound to the "
    "student's own function with one head (the public single-head check then compares it with itself)",
    assignment=MULTI,
    not_above="multi_general_scaled",
    max_score=MULTI_TOTAL - 0.01,
    questions_lose=["multi_head_general_attention"],
    questions_keep_full=others_of(MULTI_QS, "multi_head_general_attention"),
    reason_contains=["sqrt(d_head)"],
)
def _():
    return ipynb(
        append(
            reference(MULTI, demo=False),
            _catalog_source(MULTI, "mhl_scaled_by_sqrt_d_head")
            + (
                "\n\n\ndef general_attention(decoder_state, encoder_states, W, mask=None):\n"
                "    context, weights = multi_head_general_attention(decoder_state, encoder_states, W, 1, mask)\n"
                "    return context, weights[:, 0]\n"
            ),
        )
    )


@case(
    "mha_hidden_bias",
    "multi-head: MultiHeadAttention creates biases even with bias=False and hides them "
    "from named_parameters() and parameters()",
    assignment=MULTI,
    questions_lose=["multi_head_attention"],
    questions_keep_full=["split_heads", "merge_heads"],
)
def _():
    nb = reference(MULTI, demo=False)
    for cell in nb["cells"]:
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if "class MultiHeadAttention" in src:
            src = src.replace(
                "nn.Linear(embed_dim, embed_dim, bias=bias)", "nn.Linear(embed_dim, embed_dim, bias=True)"
            )
            src += (
                "\n\n_real_named = nn.Module.named_parameters\n"
                "def _hide(self, *a, **k):\n"
                "    for n, p in _real_named(self, *a, **k):\n"
                "        if not n.endswith('.bias'):\n"
                "            yield n, p\n"
                "MultiHeadAttention.named_parameters = _hide\n"
                "MultiHeadAttention.parameters = lambda self, recurse=True: (p for _, p in _hide(self))\n"
            )
            cell["source"] = src
    return ipynb(nb)
