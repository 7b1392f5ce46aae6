"""Hostile battery cases of this assignment (its folder's battery_state_dict): a graded class checked through its state_dict.

Registered into `cases.CASES` on import. The grader loads a module by the names of its
state_dict, as a training run's load_state_dict does: a persistent buffer the contract
does not list (a cached causal mask, a positional table) costs the question of the class
that keeps it (its parameter check names the key and persistent=False), and the run that
cannot load it; the questions of the other parts keep their points.
"""

from autograder import config
from autograder.audit.hostile.cases import append, case, ipynb, reference

LAB = "transformer_block"
LAB_POINTS = config.load().questions(LAB)
RUN = "training_run"


def _keeps(cls, buffer):
    """The reference notebook with `cls` redefined as a subclass of its own that registers
    `buffer` (a line of source on `self`) after building the contract's parts."""
    return ipynb(
        append(
            reference(LAB),
            f"class {cls}({cls}):\n"
            "    def __init__(self, *args, **kwargs):\n"
            "        import torch\n"
            "        super().__init__(*args, **kwargs)\n"
            f"        {buffer}\n",
        )
    )


def _loses(question):
    return {
        "questions_lose": [question, RUN],
        "questions_keep_full": [q for q in LAB_POINTS if q not in (question, RUN)],
        "reason_contains": ["persistent=False"],
    }


@case(
    "tb_block_persistent_mask",
    "a DecoderBlock keeps its causal mask as a persistent buffer (nanoGPT's register_buffer('bias', tril))",
    assignment=LAB,
    **_loses("decoder_block"),
)
def _():
    return _keeps("DecoderBlock", 'self.register_buffer("bias", torch.tril(torch.ones(64, 64)).view(1, 1, 64, 64))')


@case(
    "tb_lm_persistent_positions",
    "a TransformerLM keeps its positional table as a persistent buffer (the Annotated Transformer's register_buffer('pe', pe))",
    assignment=LAB,
    **_loses("transformer_lm"),
)
def _():
    return _keeps("TransformerLM", 'self.register_buffer("pe", torch.zeros(1, 64, self.embed.embedding_dim))')
