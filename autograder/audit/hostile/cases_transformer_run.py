"""Hostile battery cases (cases_transformer_run): the transformer lab's run in the grader.

Registered into `cases.CASES` on import. The judge judges the run from what it
computes itself (`private/suites/transformer_block/training.py`). The provided
driver `run_train_steps` is the kit's whatever a cell redefines, but the
student's TransformerLM decides what it sends back (its state_dict): each kind
below costs the training_run question (and no part it does not break), with a
one-line reason.
"""

from autograder import config
from autograder.audit.hostile.cases import case, ipynb, reference

LAB = "transformer_block"
LAB_POINTS = config.load().questions(LAB)
RUN = "training_run"
PARTS = [q for q in LAB_POINTS if q != RUN]
LOSES = {"max_score": sum(LAB_POINTS.values()) - LAB_POINTS[RUN], "questions_zero": [RUN], "questions_keep_full": PARTS}


def state_dict_override(body):
    """The reference notebook with TransformerLM redefined as a subclass of the student's own
    whose state_dict (what run_train_steps sends back) is `body` (with `own`, the real one)."""
    nb = reference(LAB)
    source = (
        "class TransformerLM(TransformerLM):\n"
        "    def state_dict(self, *args, **kwargs):\n"
        "        import torch\n"
        "        own = super().state_dict(*args, **kwargs)\n"
        f"        {body}\n"
    )
    nb["cells"].append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source})
    return ipynb(nb)


@case(
    "tb_run_nan_parameters",
    "the TransformerLM's state_dict (what the run sends back) is full of NaN",
    assignment=LAB,
    reason_contains=["NaN or inf"],
    **LOSES,
)
def _():
    return state_dict_override("return {k: torch.full_like(v, float('nan')) for k, v in own.items()}")


@case(
    "tb_run_extra_parameter",
    "the TransformerLM's state_dict holds a tensor the contract's model does not have",
    assignment=LAB,
    reason_contains=["which the contract's modules do not have"],
    **LOSES,
)
def _():
    return state_dict_override("return dict(own, cheat=torch.zeros(3))")


@case(
    "tb_run_missing_parameter",
    "the TransformerLM's state_dict leaves out the head's weight",
    assignment=LAB,
    reason_contains=["no floating-point tensor head.weight"],
    **LOSES,
)
def _():
    return state_dict_override("return {k: v for k, v in own.items() if k != 'head.weight'}")
