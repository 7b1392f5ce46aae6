"""Feedback never gives a typed answer away.

Two questions are answered by typing, not by code: classic_attention's
`shapes_drill` (three words: the tensor whose shape does not fit, the shape it
needs, the kind of fix) and scaled_dot_product's `by_hand` (the scores, weights
and output of a small worked example). A message that names the drill's
answer, or states one of the by-hand numbers, gives the points away to anyone
who submits once. The answers come from the kit's own sources
(`solutions.classic_attention.BY_HAND`, the by-hand reference computed by the
suite's `by_hand_answers`), never from copies here.

What counts as giving the answer:
- the drill's shape, in the contract's size names and in order, in any spacing,
  quoting or bracketing (`(d_h, d_s)`, `("d_h","d_s")`, `d_h x d_s`...), anywhere;
- the drill's tensor named together with its fix (`W` with `transpose`, `W.T`,
  "untransposed W", "W the wrong way round"...), anywhere;
- in a message of the drill's own questions (shapes_drill,
  fixed_general_attention, test_attention_shapes), the fix at all, or the
  tensor outside the contract's public phrases (the signature, the score's
  formula, an input's value, the list of allowed words);
- a by-hand number at the precision a student types (3 decimals) or a common
  rounding of it (2 to 6 decimals, at least two significant digits).

Checked on every message that can be shown under those two assignments (every
key of the judge's catalogs, every suites key (suites.yml, an assignment's messages.yml) the kit's code names outside
the other assignments' suites), rendered in both languages with plausible
fields; on the public checks' MESSAGES of both master notebooks and their
pt-BR translations; and (slow) on the real feedback of graded submissions with
wrong drill answers, wrong fixes and regression tests, and wrong by-hand
numbers.
"""

import ast
import json
import re
import string

import pytest
import yaml

from autograder import config, declarations, layout, messages
from autograder.audit.catalog import fill, load_entry, reference_sources, reference_typed
from autograder.judge import by_hand as typed_cells
from autograder.private.assignments.scaled_dot_product.common import by_hand_answers
from autograder.private.solutions import classic_attention as ca_ref
from conftest import ROOT, grade, template

CFG = config.load(ROOT / "grading.yml")
PACKAGE = layout.PACKAGE
TYPED_ASSIGNMENTS = ("classic_attention", "scaled_dot_product")

# -- the answers, from the kit's sources --------------------------------------------
DRILL = ca_ref.BY_HAND["shapes_drill"]
DRILL_FORM = typed_cells.Form.from_data("shapes_drill", declarations.typed_forms()["shapes_drill"])
TENSOR, SHAPE, FIX = DRILL["wrong_tensor"], tuple(DRILL["right_shape"]), DRILL["fix"]
DRILL_FILES = ("drill.py", "test_shapes_drill.py", "test_fixed_general_attention.py", "test_test_attention_shapes.py")
DRILL_QUESTIONS = ("shapes_drill", "fixed_general_attention", "test_attention_shapes")

# How each kind of fix is written, in words (both languages) and in code.
FIX_FORMS = {
    "transpose": [r"transp", r"\.T\b", r"\.mT\b", r"\.t\(\)", r"\bpermute\b", r"swapaxes", r"swapdims"],
    "reshape": [r"reshap", r"\.view\(", r"reformat"],
    "project": [r"\bproject(?!ed)", r"\bproje[cçt]", r"projeç"],
}
# Said of the tensor, these say the fix as plainly as its name.
ORIENTATION = [
    r"wrong way round",
    r"other way round",
    r"orienta",
    r"ao contr[aá]rio",
    r"invertid",
    r"sem transpor",
    r"\bflip",
]

NAME = r"(?<![A-Za-z0-9_]){}(?![A-Za-z0-9_])"
TENSOR_RE = re.compile(NAME.format(re.escape(TENSOR)))
_SEP = r"""\s*["'`]?\s*(?:,|\bx\b|×|\*|\bby\b|\bpor\b)\s*["'`]?\s*"""
SHAPE_RES = [
    re.compile(NAME.format(_SEP.join(re.escape(s) for s in SHAPE))),
    re.compile(NAME.format(re.escape(SHAPE[0]) + r"\s+(?:rows|linhas)\W+(?:and\s+|e\s+)?" + re.escape(SHAPE[-1]))),
]
# The contract's public phrases that name the tensor without singling it out.
PUBLIC = [
    re.compile(r"decoder_states?,\s*encoder_states,\s*" + re.escape(TENSOR) + r"(?:,\s*mask)?"),  # the signature
    re.compile(r"\(?" + re.escape(TENSOR) + r"\s+h(?:_i|_\{b,\s*i\})?\)?"),  # the score s . (W h_i)
    re.compile(re.escape(TENSOR) + r"\s*=\s*[\[{<]"),  # an input's value
] + [re.compile(re.escape(", ".join(words))) for words in DRILL_FORM.words.values()]  # the allowed words


def _fix_res(fix):
    assert fix in FIX_FORMS, f"the drill's fix {fix!r} has no written forms here: add them to FIX_FORMS"
    return [re.compile(p, re.IGNORECASE) for p in FIX_FORMS[fix]]


FIX_RES = _fix_res(FIX)
ORIENTATION_RES = [re.compile(p, re.IGNORECASE) for p in ORIENTATION]


def _by_hand_numbers():
    """The by-hand answers (float64, from the reference), flat."""
    return [float(x) for v in by_hand_answers().values() for x in v.reshape(-1)]


NUMBERS = _by_hand_numbers()
NUMBER_RE = re.compile(r"(?<![\w.,])(\d+)[.,](\d+)(?![\d])")


def _significant(text):
    return len(text.replace(".", "").lstrip("0"))


def number_leaks(text, numbers=None, fewest=2):
    """The numbers in `text` that are a by-hand answer rounded to `fewest` to 6 decimals."""
    numbers = NUMBERS if numbers is None else numbers
    out = []
    for m in NUMBER_RE.finditer(text):
        whole, frac = m.groups()
        if not fewest <= len(frac) <= 6 or _significant(f"{whole}.{frac}") < 2:
            continue
        x = float(f"{whole}.{frac}")
        if any(abs(round(v, len(frac)) - x) < 1e-12 for v in numbers):
            out.append(m.group())
    return out


def drill_leaks(text, strict=False):
    """Why `text` gives the drill's answer away ([] when it does not)."""
    found = [f"shape {m.group()!r}" for r in SHAPE_RES for m in r.finditer(text)]
    named = bool(TENSOR_RE.search(text))
    fixes = [m.group() for r in FIX_RES for m in r.finditer(text)]
    if named and (fixes or any(r.search(text) for r in ORIENTATION_RES)):
        found.append(f"{TENSOR!r} with its fix ({', '.join(fixes) or 'orientation'})")
    if strict:  # (a check's own id, as test_x[scores_transposed], names a hidden variant, not the fix)
        unlabelled = re.sub(r"\btest_\w+\[[^\]]*\]", " ", text)
        found += [f"the fix {m.group()!r}" for r in FIX_RES for m in r.finditer(unlabelled)]
        rest = text
        for r in PUBLIC:
            rest = r.sub(" ", rest)
        if TENSOR_RE.search(rest):
            found.append(f"the tensor {TENSOR!r} singled out")
    return found


# -- the leak detectors themselves ------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "W was reshaped to (d_h, d_s) rather than transposed",
        'right_shape = ("d_h","d_s")',
        "a matrix d_h x d_s",
        "W ainda é usado sem transpor",
        "x @ W.T",
        "the untransposed W gives outputs of the right shapes",
        "look again at which tensor meets W and in which orientation",
    ],
)
def test_the_detector_sees_each_way_of_stating_the_drills_answer(text):
    assert drill_leaks(text), text


@pytest.mark.parametrize(
    "text",
    [
        "the projection is already there (W); a second matrix would change the model",
        "the test must call `attention(decoder_states, encoder_states, W, mask)`",
    ],
)
def test_the_strict_detector_sees_the_tensor_singled_out_but_not_the_signature(text):
    assert not drill_leaks(text) or "signature" in text
    strict = drill_leaks(text, strict=True)
    assert bool(strict) == ("projection" in text), (text, strict)


def test_the_detector_sees_the_by_hand_numbers_as_typed_and_rounded():
    three = [f"{v:.3f}" for v in NUMBERS if abs(v) > 0.01]
    assert len(three) >= 6 and all(number_leaks(f"expected {x}") for x in three), three
    assert number_leaks("scores [0.0, 2.83, 1.41]") == ["2.83", "1.41"]
    assert number_leaks("weights 0.7679 and output 3.1171") == ["0.7679", "3.1171"]
    assert not number_leaks("within 0.001 of the exact value; 9.2848; (d_k = 2)")


# -- every message that can be shown under a typed question's assignment ---------------
def _fields(template):
    return [f for _, f, _, _ in string.Formatter().parse(template) if f]


PLAUSIBLE = {
    "name": "encoder_states",
    "what": "your function",
    "got": "(2, 3, 5)",
    "expected": "(2, 3, 6)",
    "reason": "line 3: a call",
    "why": "invalid syntax",
    "cell": "cell 76",
    "error": "RuntimeError: boom",
    "module": "math",
    "path": "hw.ipynb",
    "names": "scores, weights",
    "shape": "(2, 3)",
    "target": "fix",
    "word": "projected",
    "allowed": "",
    "tag": "kit-shapes-drill",
    "which": "scores[1]",
    "tol": "0.001",
    "step": "the softmax of your scores",
    "sum": "1.2",
    "text": "x",
    "cause": "a call",
    "question": "shapes_drill",
    "assignment": "classic_attention",
    "function": "fixed_general_attention",
    "label": "fix",
    "file": "hw.ipynb",
    "dtype": "torch.float32",
    "device": "cpu",
    "type": "int",
    "message": "boom",
    "finding": "a loop",
    "code": "x = 1",
    "language": "en",
    "scope": "module",
    "where": "line 2",
    "kernel": "python3",
}


class _Plausible(dict):
    """A public check's fields: a short tensor for each (the checks format lists of numbers)."""

    def __missing__(self, key):
        return _Field()


class _Field:
    def __format__(self, spec):
        return format(1.25, spec) if spec else "[[0.0, 1.0], [0.0, 0.0]]"


class _Three:
    """Any other field: 3, as text or under a format spec (`{score:g}`)."""

    def __format__(self, spec):
        return format(3, spec) if spec else "3"


def _rendered(key, lang):
    entry = messages.catalog()[key]
    fields = {f: PLAUSIBLE.get(f, _Three()) for f in _fields(entry["en"])}
    if "allowed" in fields:
        fields["allowed"] = ", ".join(DRILL_FORM.words["wrong_tensor"])
    return messages.t(key, lang, **fields)


def _strings_in(paths):
    out = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                out.add(node.value)
    return out


def _test_names(dirs):
    return {
        n.name
        for d in dirs
        for p in sorted(d.glob("test_*.py"))
        for n in ast.parse(p.read_text()).body
        if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")
    }


def _shown_keys():
    """(every key that can be shown under a typed question's assignment, the drill's own keys)."""
    cat = messages.catalog()
    suites = {  # the suites' words: the shared library's and each assignment's own
        key
        for path in [PACKAGE / "messages" / "suites.yml", *layout.assignment_messages()]
        for key in yaml.safe_load(path.read_text(encoding="utf-8"))
    }
    others = [d for d in layout.ASSIGNMENTS.iterdir() if d.is_dir() and d.name not in TYPED_ASSIGNMENTS]
    paths = [
        p
        for p in sorted(PACKAGE.rglob("*.py"))
        if not any(p.is_relative_to(o) for o in others)
        and layout.CATALOG_FOLDER not in p.relative_to(layout.PACKAGE).parts[:-1]
    ]
    named = _strings_in(paths)
    labels = {f"check_{n[5:]}" for n in _test_names([layout.suite(a) for a in TYPED_ASSIGNMENTS])}
    shown = {k for k in cat if k not in suites} | {k for k in suites if k in named or k in labels}
    drill_dir = layout.suite("classic_attention")
    drill_named = _strings_in([drill_dir / f for f in DRILL_FILES])
    drill_labels = {
        f"check_{n[5:]}"
        for n in _test_names([drill_dir])
        if n[5:]
        in {
            x.name
            for f in DRILL_FILES[1:]
            for x in ast.parse((drill_dir / f).read_text()).body
            if isinstance(x, ast.FunctionDef)
        }
    }
    drill = {k for k in suites if k in drill_named or k in drill_labels} | {
        k for k in cat if k.startswith(("by_hand_word_", "drill_", "cause_drill_"))
    }
    return sorted(shown), sorted(drill)


SHOWN, DRILL_KEYS = _shown_keys()


def test_the_keys_checked_include_every_drill_and_by_hand_message():
    cat = messages.catalog()
    assert len(SHOWN) >= 300 and len(DRILL_KEYS) >= 40, (len(SHOWN), len(DRILL_KEYS))
    for key in (
        "cause_drill_still_broken",
        "cause_drill_fix_reshaped",
        "cause_drill_shape_other",
        "cause_matmul_operand",
        "cause_general_w_transposed",
        "cause_by_hand_not_scaled",
        "by_hand_word_unknown",
        "check_fix",
    ):
        assert key in cat and key in SHOWN, key
    assert "cause_drill_still_broken" in DRILL_KEYS and "cause_general_w_transposed" not in DRILL_KEYS


@pytest.mark.parametrize("lang", messages.LANGUAGES)
def test_no_message_shown_under_a_typed_question_states_its_answer(lang):
    leaks = {}
    drill = set(DRILL_KEYS)
    for key in SHOWN:
        text = _rendered(key, lang)
        found = drill_leaks(text, strict=key in drill) + [f"by-hand number {x}" for x in number_leaks(text)]
        if found:
            leaks[key] = (found, text)
    assert not leaks, "\n".join(f"{k}: {why}\n    {text}" for k, (why, text) in leaks.items())


# -- the public checks of the master notebooks ------------------------------------------
def _public_messages(assignment):
    """[(test function, message key, lang, text)] of the master notebook's public checks
    (their MESSAGES dicts) and of its pt-BR translation."""
    folder = ROOT / "assignments" / assignment
    nb = json.loads((folder / f"{assignment}.ipynb").read_text())
    out = []
    for cell in nb["cells"]:
        if cell.get("cell_type") != "code":
            continue
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if "MESSAGES" not in src:
            continue
        for fn in ast.walk(ast.parse(src)):
            if isinstance(fn, ast.FunctionDef):
                for node in ast.walk(fn):
                    if (
                        isinstance(node, ast.Assign)
                        and any(getattr(t, "id", "") == "MESSAGES" for t in node.targets)
                        and isinstance(node.value, ast.Dict)
                    ):
                        for k, v in zip(node.value.keys, node.value.values):
                            out.append((fn.name, k.value, "en", v.value))
    pt = yaml.safe_load((folder / f"{assignment}.pt-BR.yml").read_text(encoding="utf-8"))
    for fn, entry in (pt.get("messages") or {}).items():
        for k, text in (entry.get("text") or {}).items():
            out.append((fn, k, "pt-BR", text))
    return out


@pytest.mark.parametrize("assignment", TYPED_ASSIGNMENTS)
def test_no_public_check_states_a_typed_answer(assignment):
    found = _public_messages(assignment)
    assert len(found) >= 20 and {lang for *_, lang, _ in found} == {"en", "pt-BR"}, len(found)
    leaks = []
    for fn, key, lang, message in found:
        text = message.format_map(_Plausible())
        strict = any(q in fn for q in DRILL_QUESTIONS)
        why = drill_leaks(text, strict=strict) + [f"by-hand number {x}" for x in number_leaks(text)]
        if why:
            leaks.append(f"{fn}[{key}] ({lang}): {why}\n    {text}")
    assert not leaks, "\n".join(leaks)


# -- real feedback of graded submissions --------------------------------------------------
CA = "classic_attention"
SDP = "scaled_dot_product"


def _entry(assignment, name):
    return load_entry(layout.catalog(assignment) / f"{name}.py")


def _still_broken():
    """The provided function, unchanged, as the student's fix."""
    import inspect

    return inspect.getsource(ca_ref.broken_general_attention).replace(
        "def broken_general_attention", "def fixed_general_attention", 1
    )


# (drill cell, entries of wrong functions, the fix's source or None, language)
CA_SUBMISSIONS = {
    "still_broken": (
        'wrong_tensor = "projected"\nright_shape = ("d_s", "d_h")\nfix = "reshape"',
        ["general_W_transposed", "regtest_square_sizes"],
        _still_broken,
        "en",
    ),
    "reshaped": (
        'wrong_tensor = "encoder_states"\nright_shape = ("batch_size", "d_s", "d_h")\nfix = "project"',
        ["fixed_reshape_w", "regtest_shapes_only"],
        None,
        "pt-BR",
    ),
    "other": (
        'wrong_tensor = "scores"\nright_shape = ("T_enc", "d_s")\nfix = "reshape"',
        ["fixed_context_from_projected", "regtest_context_equals_d"],
        None,
        "en",
    ),
    "other_pt": (
        'wrong_tensor = "projected"\nright_shape = ("T_enc", "d_attn")\nfix = "project"',
        ["fixed_softmax_over_steps", "regtest_weights_only", "general_W_transposed"],
        None,
        "pt-BR",
    ),
}
SDP_SUBMISSIONS = {
    "not_scaled": (["by_hand_not_scaled", "sdpa_not_scaled"], "en"),
    "one_slip": (["by_hand_one_score_slip", "sdpa_scaled_by_dk"], "pt-BR"),
    "rounded": (["by_hand_rounded_scores", "sdpa_softmax_over_queries"], "en"),
    "keys_for_values": (["by_hand_keys_for_values", "sdpa_mask_ignored"], "pt-BR"),
}


def _graded(tmp_path, assignment, entry_names, typed, extra=None, lang="en"):
    sources = reference_sources(assignment)
    filled = reference_typed(assignment)
    for name in entry_names:
        e = _entry(assignment, name)
        sources.update(e.sources)
        filled.update(e.typed or {})
    sources.update(extra or {})
    filled.update(typed)
    nb = fill(template(assignment), sources, filled)
    path = tmp_path / f"{assignment}.ipynb"
    path.write_text(json.dumps(nb))
    return grade(path, cfg=CFG, lang=lang)


def _lines(result):
    return {q: "\n".join(r.lines) for q, r in result.questions.items()}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CA_SUBMISSIONS))
def test_the_feedback_of_wrong_drill_answers_and_fixes_never_states_the_answer(tmp_path, case):
    cell, names, fix, lang = CA_SUBMISSIONS[case]
    extra = {"fixed_general_attention": fix()} if fix else None
    result = _graded(tmp_path, CA, names, {"shapes_drill": cell}, extra, lang)
    feedback = _lines(result)
    for q in DRILL_QUESTIONS:  # every drill question failed, so its feedback was written
        assert result.questions[q].score < result.questions[q].max_score, (q, feedback[q])
    assert any(messages.t("cause_marker", lang).rstrip(":") in feedback[q] for q in DRILL_QUESTIONS), feedback
    leaks = {}
    for q, text in feedback.items():
        why = drill_leaks(text, strict=q in DRILL_QUESTIONS)  # (its random inputs' numbers are no by-hand answer)
        if why:
            leaks[q] = (why, text)
    assert not leaks, "\n".join(f"{q}: {why}\n{text}" for q, (why, text) in leaks.items())


def _typed_numbers(entry_names):
    nums = []
    for name in entry_names:
        cell = (_entry(SDP, name).typed or {}).get(typed_cells.QUESTION) or ""
        nums += [float(x) for x in re.findall(r"-?\d+\.\d+|-?\d+", cell)]
    return nums


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(SDP_SUBMISSIONS))
def test_the_feedback_of_wrong_by_hand_numbers_never_states_the_expected_ones(tmp_path, case):
    names, lang = SDP_SUBMISSIONS[case]
    result = _graded(tmp_path, SDP, names, {}, None, lang)
    feedback = _lines(result)
    q = result.questions[typed_cells.QUESTION]
    assert q.score < q.max_score, feedback[typed_cells.QUESTION]
    # a number the student typed right may come back to them; the others may not
    typed = _typed_numbers(names)
    hidden = [v for v in NUMBERS if not any(abs(v - x) <= 1.5e-3 for x in typed)]
    assert hidden, typed
    # the by-hand question's feedback (the others show errors on random inputs, no by-hand answer)
    leaks = {q: number_leaks(text, hidden) for q, text in feedback.items() if q == typed_cells.QUESTION}
    assert not any(leaks.values()), "\n".join(f"{q}: {v}\n{feedback[q]}" for q, v in leaks.items() if v)
