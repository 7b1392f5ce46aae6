"""Hidden tests: by_hand, attention for one query computed by hand (solutions BY_HAND).

The student types the scaled scores, the weights and the output of the
notebook's small instance into the by-hand cell; the reader reads those
numbers without running anything (`Submission.by_hand`, `judge.by_hand`), so
no call reaches the worker here. Three checks hold each number against the
reference computed here in float64 from the same instance, within
10^-decimals (grading.yml `tolerances.by_hand`); two more hold each step
against the student's own numbers of the step before (the weights are the
softmax of *your* scores, the output is *your* weights times the values), so
a slip in the scores costs the checks it spoils, not the steps done right
after it. A failure names the step that went wrong and, where the numbers
show it, why (the scale forgotten, the softmax taken over something else,
the keys used for the values, rounding too early...). Messages name which
numbers are off, never the expected ones.
"""

import math

import torch

from autograder.judge.failure import Msg
from autograder.messages import number, t
from autograder.private.assignments.scaled_dot_product.common import by_hand_answers, by_hand_instance
from autograder.private.suites import failing, typed

QUESTION = "by_hand"


# -- the instance and its answers (float64) --------------------------------------
def instance():
    """(query (1, d_k), key (T_k, d_k), value (T_k, d_v)) as float64 tensors."""
    return by_hand_instance(QUESTION)


def reference():
    """{"scores": (T_k,), "weights": (T_k,), "output": (d_v,)}: the answers, from the reference."""
    return by_hand_answers(QUESTION)


def decimals(cfg):
    """grading.yml `tolerances.by_hand.decimals` (0 to 12: `autograder.schema`): the decimal
    places each typed number must get right."""
    return cfg.data["tolerances"][QUESTION]["decimals"]


def tolerance(cfg):
    """10^-decimals: how far a typed number may be from the reference's."""
    return 10.0 ** -decimals(cfg)


def _near(cfg):
    """How closely numbers must agree with a known mistake for it to be the likely
    cause: as closely as numbers typed to one decimal place fewer can."""
    return 6 * tolerance(cfg)


# -- the student's numbers ---------------------------------------------------------
def answers(sub):
    """{name: value} as the reader read the by-hand cell; fails when there is no
    such cell or it breaks the cell's rule."""
    return typed.typed_answers(
        getattr(sub.submission, "by_hand", None),
        "by_hand_missing",
        "cause_by_hand_missing",
        "by_hand_unreadable",
        "cause_by_hand_rule",
    )


# why each quantity has its size, and what each step's likely causes are called (keys, for the catalog)
SIZE_WHY = {"scores": "by_hand_size_scores", "weights": "by_hand_size_weights", "output": "by_hand_size_output"}
FOLLOW = {"weights": "cause_by_hand_weights_follow", "output": "cause_by_hand_output_follow"}
RIGHT_ALONE = {"weights": "cause_by_hand_weights_right_alone", "output": "cause_by_hand_output_right_alone"}


def _numbers(values, name, size):
    """(the student's `name` as a float64 tensor of `size` numbers, None), or (None,
    why not) when it is not answered or of another size. A single row [[...]] counts
    as a list."""
    v = values.get(name)
    if isinstance(v, list) and len(v) == 1 and isinstance(v[0], list):
        v = v[0]  # (1, n): one query's row
    if v is None or (isinstance(v, list) and any(x is None for x in v)):
        return None, t("by_hand_not_answered", name=name)
    if not isinstance(v, list) or any(isinstance(x, list) for x in v) or len(v) != size:
        got = (
            t("by_hand_count_one")
            if not isinstance(v, list)
            else t("by_hand_count_nested")
            if any(isinstance(x, list) for x in v)
            else t("by_hand_count_n", n=len(v))
        )
        return None, t("by_hand_count", name=name, got=got, expected=size, why=t(SIZE_WHY[name]))
    return torch.tensor(v, dtype=torch.float64), None


def quantity(values, name, size):
    """The student's `name` (see `_numbers`); fails when it is not there as asked."""
    got, why = _numbers(values, name, size)
    if why:
        failing.fail_form(why)
    return got


def _sizes():
    q, k, v = instance()
    return {"scores": k.shape[0], "weights": k.shape[0], "output": v.shape[1]}


def mine(sub, *names):
    """The student's numbers for `names`, each checked for its size."""
    values, sizes = answers(sub), _sizes()
    return [quantity(values, n, sizes[n]) for n in names]


def _off(got, want, tol):
    """The indices where `got` is further than `tol` (a number or per entry) from `want`."""
    tol = torch.as_tensor(tol, dtype=torch.float64)
    return [i for i in range(got.numel()) if abs(float(got[i] - want[i])) > float(tol.expand_as(got)[i]) * (1 + 1e-9)]


def _matches(got, want, near):
    return got.shape == want.shape and bool(((got - want).abs() <= near).all())


def _which(name, off):
    return ", ".join(f"{name}[{i}]" for i in off)


def close(got, want, name, cfg, hint):
    """`got` within 10^-decimals of the reference `want`, else fail naming the
    numbers that are off (not the expected ones) and the likely cause."""
    tol = tolerance(cfg)
    off = _off(got, want, tol)
    if off:
        symptom = t(
            "by_hand_differs", name=name, n=len(off), total=got.numel(), tol=number(tol, "g"), which=_which(name, off)
        )
        failing.fail(failing.caused(symptom, hint(got, want, off)))


def follows(got, want, tol, name, step, cfg, hint):
    """`got` (the student's numbers of one step) within `tol` of `want` (that step
    done on the student's own numbers of the step before), else fail."""
    off = _off(got, want, tol)
    if off:
        failing.fail(
            failing.caused(
                t(
                    "by_hand_step_differs",
                    name=name,
                    n=len(off),
                    total=got.numel(),
                    which=_which(name, off),
                    step=t(step),
                    decimals=decimals(cfg),
                ),
                hint(got),
            )
        )


# -- likely causes, from the instance ------------------------------------------------
def _alternatives():
    """{quantity: [(cause key, numbers)]}: what the usual mistakes give on this instance."""
    q, k, v = instance()
    d_k = q.shape[-1]
    dots = (q @ k.T)[0]
    right = dots / math.sqrt(d_k)
    w = torch.softmax(right, -1)
    scores = [
        ("cause_by_hand_not_scaled", dots),
        ("cause_by_hand_divided_by_dk", dots / d_k),
        ("cause_by_hand_multiplied", dots * math.sqrt(d_k)),
        ("cause_by_hand_values_for_keys", (q @ v.T)[0] / math.sqrt(d_k)),
        ("cause_by_hand_values_for_keys", (q @ v.T)[0]),
        ("cause_by_hand_scores_are_weights", w),
    ]
    weights = [(key, torch.softmax(s, -1)) for key, s in scores[:4]] + [
        ("cause_by_hand_no_exp", right / right.sum()),
        ("cause_by_hand_not_normalised", right.exp()),
        ("cause_by_hand_softmax_over_queries", torch.ones_like(right)),
        ("cause_by_hand_rounded_scores", torch.softmax(right.round(decimals=1), -1)),
        ("cause_by_hand_weights_are_scores", right),
    ]
    output = [(key, a @ v) for key, a in weights[:5]] + [
        ("cause_by_hand_keys_for_values", w @ k),
        ("cause_by_hand_scores_for_weights", right @ v),
        ("cause_by_hand_not_normalised", right.exp() @ v),
        ("cause_by_hand_mean", v.mean(0)),
        ("cause_by_hand_hard", v[int(w.argmax())]),
        ("cause_by_hand_rounded_weights", w.round(decimals=1) @ v),
        ("cause_by_hand_rounded_weights", w.round(decimals=2) @ v),
    ]
    return {"scores": scores, "weights": weights, "output": output}


def _known(got, name, cfg):
    """The likely cause when `got` is what a known mistake gives. Rounding too early
    lands near the right numbers, so those mistakes must match closely."""
    for key, alt in _alternatives()[name]:
        if _matches(got, alt, 1.5 * tolerance(cfg) if key.startswith("cause_by_hand_rounded") else _near(cfg)):
            return Msg(key)
    return None


def _rounding(got, want, cfg):
    """Right up to rounding: the expected numbers given to fewer decimals, or every
    number near the expected one."""
    for places in range(decimals(cfg)):
        if _matches(got, want.round(decimals=places), 1e-9):
            return Msg("cause_by_hand_few_decimals", places=places, decimals=decimals(cfg))
    return Msg("cause_by_hand_rounded", tol=number(tolerance(cfg), "g")) if _matches(got, want, _near(cfg)) else None


def scores_hint(cfg):
    def hint(got, want, off):
        cause = _known(got, "scores", cfg) or _rounding(got, want, cfg)
        if cause is None and len(off) == 1:
            cause = Msg("cause_by_hand_one_score", i=off[0], number=off[0] + 1)
        return cause

    return hint


def weights_hint(sub, cfg):
    def hint(got, want, off):
        near = _near(cfg)
        cause = _known(got, "weights", cfg)
        if cause is None:
            cause = _from_your(sub, cfg, got, "weights")
        # rounded weights need not sum to 1: their rounding is checked before their sum
        cause = cause or _rounding(got, want, cfg)
        if cause is None and abs(float(got.sum()) - 1) > 1.5 * tolerance(cfg):
            cause = Msg("cause_by_hand_sum", sum=number(float(got.sum()), ".4g"))
        if cause is None and _matches(got.sort().values, want.sort().values, near):
            cause = Msg("cause_by_hand_order")
        return cause

    return hint


def output_hint(sub, cfg):
    def hint(got, want, off):
        return _known(got, "output", cfg) or _from_your(sub, cfg, got, "output") or _rounding(got, want, cfg)

    return hint


def _from_your(sub, cfg, got, name):
    """The cause when `got` follows from the student's own (wrong) numbers of the step before."""
    before = {"weights": "scores", "output": "weights"}[name]
    prev, _ = _numbers(answers(sub), before, _sizes()[before])
    if (
        prev is not None
        and _off(prev, reference()[before], tolerance(cfg))
        and not _off(got, _step(name, prev), _step_tolerance(name, cfg))
    ):
        return Msg(FOLLOW[name])
    return None


# -- one step on the student's own numbers -------------------------------------------
def _step(name, prev):
    """`name` computed from the student's numbers of the step before."""
    _, _, v = instance()
    return torch.softmax(prev, -1) if name == "weights" else prev @ v


def _step_tolerance(name, cfg):
    """What rounding the typed numbers to `decimals` places can explain in one step:
    the step's own number (tol) plus the step before's rounding carried through it
    (softmax moves by at most half a score's change; the output by the change of each
    weight times the size of its value)."""
    tol = tolerance(cfg)
    if name == "weights":
        return 1.5 * tol
    _, _, v = instance()
    return tol * (1 + v.abs().sum(0))  # (d_v,)


def _step_alternatives(name, prev):
    """[(cause key, numbers)] the usual mistakes make of the student's own step before."""
    q, k, v = instance()
    if name == "weights":
        return [
            ("cause_by_hand_no_exp", prev / prev.sum()),
            ("cause_by_hand_not_normalised", prev.exp()),
            ("cause_by_hand_softmax_over_queries", torch.ones_like(prev)),
            ("cause_by_hand_scaled_twice", torch.softmax(prev / math.sqrt(q.shape[-1]), -1)),
        ]
    return [
        ("cause_by_hand_keys_for_values", prev @ k),
        ("cause_by_hand_mean", v.mean(0)),
        ("cause_by_hand_hard", v[int(prev.argmax())]),
        ("cause_by_hand_rounded_weights", prev.round(decimals=1) @ v),
        ("cause_by_hand_rounded_weights", prev.round(decimals=2) @ v),
    ]


def step_hint(name, prev, cfg, extra=()):
    def hint(got):
        near = _near(cfg)
        for key, alt in list(_step_alternatives(name, prev)) + list(extra):
            if _matches(got, alt, near):
                return Msg(key)
        if not _off(got, reference()[name], tolerance(cfg)):
            return Msg(RIGHT_ALONE[name])
        fewer = _rounding(got, _step(name, prev), cfg)
        if fewer is not None and fewer.key == "cause_by_hand_few_decimals":
            return fewer
        if name == "weights" and abs(float(got.sum()) - 1) > 1.5 * tolerance(cfg):
            return Msg("cause_by_hand_sum", sum=number(float(got.sum()), ".4g"))
        if name == "weights" and _matches(got.sort().values, _step(name, prev).sort().values, near):
            return Msg("cause_by_hand_order")
        return None

    return hint


# -- the checks ------------------------------------------------------------------------
def test_scores(sub, cfg):
    """The scaled scores q . k_j / sqrt(d_k), one per key."""
    (got,) = mine(sub, "scores")
    close(got, reference()["scores"], "scores", cfg, scores_hint(cfg))


def test_weights(sub, cfg):
    """The weights: the softmax of the scaled scores over the keys."""
    (got,) = mine(sub, "weights")
    close(got, reference()["weights"], "weights", cfg, weights_hint(sub, cfg))


def test_output(sub, cfg):
    """The output: the values averaged with the weights."""
    (got,) = mine(sub, "output")
    close(got, reference()["output"], "output", cfg, output_hint(sub, cfg))


def test_weights_follow_your_scores(sub, cfg):
    """Your weights are the softmax of your own scores (right or wrong)."""
    scores, weights = mine(sub, "scores", "weights")
    follows(
        weights,
        _step("weights", scores),
        _step_tolerance("weights", cfg),
        "weights",
        "by_hand_step_softmax",
        cfg,
        step_hint("weights", scores, cfg),
    )


def test_output_follows_your_weights(sub, cfg):
    """Your output is your own weights times the values (right or wrong)."""
    weights, output = mine(sub, "weights", "output")
    _, _, v = instance()
    scores, _ = _numbers(answers(sub), "scores", _sizes()["scores"])  # only for a likely cause
    extra = [("cause_by_hand_scores_for_weights", scores @ v)] if scores is not None else []
    follows(
        output,
        _step("output", weights),
        _step_tolerance("output", cfg),
        "output",
        "by_hand_step_average",
        cfg,
        step_hint("output", weights, cfg, extra),
    )
