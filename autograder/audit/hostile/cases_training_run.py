"""Hostile battery cases (cases_training_run): the training lab's run in the grader.

Registered into `cases.CASES` on import. The judge judges the run from what it
computes itself (`private/suites/seq2seq_attention/training.py`). The provided
driver `run_train_steps` is the kit's whatever a cell redefines, but the
student's classes decide what it sends back (their state_dict) and the
student's train_step decides what training happens: each kind below costs the
training_run question (and no part it does not break), with a one-line reason.
"""

from autograder import config
from autograder.audit.hostile.cases import append, case, ipynb, reference, state_dict_override

LAB = "seq2seq_attention"
LAB_POINTS = config.load().questions(LAB)
RUN = "training_run"
PARTS = [q for q in LAB_POINTS if q != RUN]
LOSES = {"max_score": sum(LAB_POINTS.values()) - LAB_POINTS[RUN], "questions_zero": [RUN], "questions_keep_full": PARTS}


def with_cell(source):
    """The lab's reference notebook with a code cell appended (the provided cell's functions,
    run_train_steps among them, are the kit's whatever a cell redefines: the student's
    classes and train_step are what a run can tamper with)."""
    return ipynb(append(reference(LAB), source))


@case(
    "run_fake_losses_untrained",
    "train_step trains nothing and returns losses that fall from 2.0 towards 0",
    assignment=LAB,
    reason_contains=["did not go down enough"],
    max_score=sum(LAB_POINTS.values()) - LAB_POINTS[RUN] - 1,
    questions_zero=[RUN],
    questions_lose=["train_step"],
    questions_keep_full=[q for q in PARTS if q != "train_step"],
)
def _():
    return with_cell(
        "_calls = [0]\n\n\n"
        "def train_step(encoder, decoder, optimizer, src, src_lengths, tgt, tgt_lengths):\n"
        "    _calls[0] += 1\n"
        "    return 2.0 / _calls[0]\n"
    )


@case(
    "run_nan_parameters",
    "the Encoder's state_dict (what the run sends back) is full of NaN",
    assignment=LAB,
    reason_contains=["NaN or inf"],
    **LOSES,
)
def _():
    return state_dict_override(LAB, "Encoder", "return {k: torch.full_like(v, float('nan')) for k, v in own.items()}")


@case(
    "run_extra_parameter",
    "the AttentionDecoder's state_dict holds a tensor the contract's modules do not have",
    assignment=LAB,
    reason_contains=["which the contract's modules do not have"],
    **LOSES,
)
def _():
    return state_dict_override(LAB, "AttentionDecoder", "return dict(own, cheat=torch.zeros(3))")


@case(
    "run_wrong_reply",
    "the Encoder's state_dict is a string",
    assignment=LAB,
    reason_contains=["are not a state dict"],
    **LOSES,
)
def _():
    return state_dict_override(LAB, "Encoder", "return 'trained, trust me'")


@case(
    "run_meta_parameters",
    "the Encoder's state_dict is on the meta device (shapes and no values: the judge once raised on it)",
    assignment=LAB,
    reason_contains=["is on the meta device"],
    **LOSES,
)
def _():
    return state_dict_override(LAB, "Encoder", "return {k: v.to('meta') for k, v in own.items()}")
