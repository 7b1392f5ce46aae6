"""A stand-in answering for the part being graded: the hostile cases' shape (`stand_in_pair`),
which each assignment's battery_stand_in.py fills with its own attacks.

While the judge grades a part, it stands in for the other graded parts the student's code
calls (`judge/stand_in.py`); an attack reaches the reference of the graded part itself through
one of them: a stood-in class's submodule run with the student's own parameters, or a stood-in
function whose reference calls it. Where no stand-in is there to borrow, it raises, as a stub
does: the attacked question may earn no more than its control, the same notebook with that
branch always taken (what the student's own code earns: a class's parameters are its own work,
its forward is not).
"""

from autograder.audit.hostile.cases import append, case, ipynb, reference, replace_function


def _attack(assignment, name, source, borrow, tail=""):
    """The reference notebook with `name` replaced by `source` (its cell, or a cell appended for a
    class) and `tail` appended: borrowing from a stand-in, or (`borrow` False, the control) never."""
    source = source.replace("OWN_ONLY", str(not borrow))
    nb = reference(assignment, demo=False)
    nb = append(nb, source) if source.lstrip().startswith("class") else replace_function(nb, name, source)
    return ipynb(append(nb, tail) if tail else nb)


def stand_in_pair(name, what, assignment, question, questions, cls, source, tail=""):
    """A case that borrows the reference of `question` from a stand-in, and its control."""
    control = f"{name}_control"
    case(
        control,
        f"control of {name}: the same {cls}, never borrowing (it raises)",
        assignment=assignment,
        questions_lose=[question],
        questions_keep_full=[q for q in questions if q != question],
    )(lambda: _attack(assignment, cls, source, False, tail))
    case(
        name,
        what,
        assignment=assignment,
        not_above=control,
        questions_lose=[question],
        questions_keep_full=[q for q in questions if q != question],
    )(lambda: _attack(assignment, cls, source, True, tail))
