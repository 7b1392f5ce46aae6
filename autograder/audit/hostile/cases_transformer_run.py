"""Hostile battery cases (cases_transformer_run): the transformer lab's run in the grader.

Registered into `cases.CASES` on import. The judge judges the run from what it
computes itself (`private/suites/transformer_block/training.py`). The provided
driver `run_train_steps` is the kit's whatever a cell redefines, but the
student's TransformerLM decides what it sends back (its state_dict): each kind
below costs the training_run question (and no part it does not break), with a
one-line reason.
"""

from autograder import config
from autograder.audit.hostile.cases import case, state_dict_override

LAB = "transformer_block"
LAB_POINTS = config.load().questions(LAB)
RUN = "training_run"
PARTS = [q for q in LAB_POINTS if q != RUN]
LOSES = {"max_score": sum(LAB_POINTS.values()) - LAB_POINTS[RUN], "questions_zero": [RUN], "questions_keep_full": PARTS}


@case(
    "tb_run_nan_parameters",
    "the TransformerLM's state_dict (what the run sends back) is full of NaN",
    assignment=LAB,
    reason_contains=["NaN or inf"],
    **LOSES,
)
def _():
    return state_dict_override(
        LAB, "TransformerLM", "return {k: torch.full_like(v, float('nan')) for k, v in own.items()}"
    )


@case(
    "tb_run_extra_parameter",
    "the TransformerLM's state_dict holds a tensor the contract's model does not have",
    assignment=LAB,
    reason_contains=["which the contract's modules do not have"],
    **LOSES,
)
def _():
    return state_dict_override(LAB, "TransformerLM", "return dict(own, cheat=torch.zeros(3))")


@case(
    "tb_run_missing_parameter",
    "the TransformerLM's state_dict leaves out the head's weight",
    assignment=LAB,
    reason_contains=["no floating-point tensor head.weight"],
    **LOSES,
)
def _():
    return state_dict_override(LAB, "TransformerLM", "return {k: v for k, v in own.items() if k != 'head.weight'}")


@case(
    "tb_run_meta_parameters",
    "the TransformerLM's state_dict is on the meta device (shapes and no values: the judge once raised on it)",
    assignment=LAB,
    reason_contains=["is on the meta device"],
    **LOSES,
)
def _():
    return state_dict_override(LAB, "TransformerLM", "return {k: v.to('meta') for k, v in own.items()}")
