"""Hostile battery cases of this assignment (its folder's battery): a stood-in function whose
reference calls it (`dot_attention` on scores laid out as keys, whose weights are
`masked_softmax`'s), and arguments its reference refuses (`autograder.audit.hostile.cases_stand_in`).
Registered into `cases.CASES` on import."""

from autograder import config
from autograder.audit.hostile.cases import case, ipynb, reference, replace_function
from autograder.audit.hostile.cases_stand_in import stand_in_pair

CLASSIC = "classic_attention"
CLASSIC_QS = list(config.load().questions(CLASSIC))

SOFTMAX_THROUGH_DOT = """def masked_softmax(scores, mask=None, dim=-1):
    if OWN_ONLY or dot_attention is globals().get("_OWN_DOT", dot_attention):
        raise NotImplementedError("no stand-in to borrow from")
    rows = scores.movedim(dim, -1)
    shape = rows.shape
    flat = rows.reshape(-1, shape[-1])
    keep = None if mask is None else torch.broadcast_to(mask, scores.shape).movedim(dim, -1).reshape(flat.shape)
    query = torch.ones(flat.shape[0], 1, dtype=flat.dtype, device=flat.device)
    _, weights = dot_attention(query, flat.unsqueeze(-1), keep)  # scores[b, i] = 1 . h_{b,i}
    return weights.reshape(shape).movedim(-1, dim)
"""

stand_in_pair(
    "stand_in_softmax_through_dot",
    "classic attention: masked_softmax lays its scores out as keys and asks the judge's stood-in "
    "dot_attention for its weights (the reference masked_softmax of them)",
    CLASSIC,
    "masked_softmax",
    CLASSIC_QS,
    "masked_softmax",
    SOFTMAX_THROUGH_DOT,
    "_OWN_DOT = dot_attention\n",
)

# Arguments the reference refuses, of every kind a student's code can send a stood-in function:
# a list, a dict and a string where the scores go, a mask that is not one, a dimension out of
# range, one argument too many. Each is the student's error (the reference's contract refusing
# it, `faults.contract`), raised in their code: never a grader fault, whatever it sends.
HOSTILE_ARGUMENTS = """def dot_attention(decoder_state, encoder_states, mask=None):
    scores = (encoder_states @ decoder_state.unsqueeze(-1)).squeeze(-1)
    for args, kwargs in [
        (([[1.0, 2.0]],), {}),
        (({"a": 1},), {}),
        (("text",), {}),
        ((scores,), {"mask": "x"}),
        ((scores,), {"mask": {"k": scores}}),
        ((scores,), {"dim": 99}),
        ((scores, None, -1, 5), {}),
    ]:
        try:
            masked_softmax(*args, **kwargs)
        except Exception:
            pass
    weights = masked_softmax(scores, mask, dim=-1)
    return (weights.unsqueeze(1) @ encoder_states).squeeze(1), weights
"""


@case(
    "stand_in_refused_arguments",
    "dot_attention first sends the stood-in masked_softmax arguments its reference refuses "
    "(a list, a dict, a string, a wrong mask, a dimension out of range, an argument too many), "
    "catching each error: the student's errors, never a grader fault",
    assignment=CLASSIC,
    questions_keep_full=[q for q in CLASSIC_QS if q != "dot_attention"],
)
def _():
    return ipynb(replace_function(reference(CLASSIC, demo=False), "dot_attention", HOSTILE_ARGUMENTS))
