"""Typed answers: the answers of a typed-answer cell as the notebook reader read them, or
the failure about their form.
"""

from autograder.judge.failure import Msg
from autograder.judge.remote import cell_label
from autograder.messages import t
from autograder.private.suites import failing


def typed_answers(data, missing, missing_cause, unreadable, rule_cause):
    """The answers of a typed-answer cell as the reader read it (`by_hand`, the shapes
    drill): `data` is its record ({"cells", "labels", "problem", "answers"}) or None.
    Fails with the message keys given (literal at each caller, as the catalog's test
    reads them) when there is no such cell or it breaks the cell's rule."""
    if data is None:
        failing.fail_form(failing.caused(t(missing), Msg(missing_cause)))
    where = ", ".join(cell_label(label, index) for index, label in zip(data["cells"], data["labels"]))
    problem = data["problem"]
    if problem is not None:
        failing.fail_form(
            failing.caused(t(unreadable, cell=where), Msg(rule_cause, reason=Msg(problem["key"], **problem["fields"])))
        )
    return data["answers"]
