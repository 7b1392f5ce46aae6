"""Each question's public check fails where its grade will, for how the notebook is written.

The build adds one test case to every question's public test (the student notebook's
metadata, what `grader.check` runs): `test_<question>_as_graded(env)`. In the student's
kernel it reads the notebook as saved (otter's `grader`, or the set-up cell's copy where
otter cannot run), finds what the grader's reader finds (`judge.form`: a package the grader
lacks, a `!pip` line that will not run, a name only a later cell defines; `judge.by_hand`: a
typed answer that breaks its cell's rule) and fails with the grade's own words, in the
edition's language. The two modules go into the test as their source (standard library only):
one reader, three places. Where the test finds no notebook (the sandboxed worker of `check`
and of the grade, which hold only the code) it passes: there the reader's findings make the
question fail (`judge.public_checks.report`).
"""

import ast
import inspect

from autograder import declarations, messages
from autograder.judge import by_hand, detect, form
from autograder.judge.form_causes import TYPED_KEYS

# the message keys a case words its failures with (messages/*.yml), beside each typed form's reasons
KEYS = ("cell_shown", "cause_marker", *form.KEYS)


def _compact(module):
    """A module's source without its docstrings and comments (what runs, nothing to translate)."""
    tree = ast.parse(inspect.getsource(module))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            body[:] = body[1:] or [ast.Pass()]
    return ast.unparse(tree)


def _reasons():
    """The keys of a typed answer's reasons (`by_hand.Unreadable`: messages/reader.yml's `by_hand_*`)."""
    return sorted(k for k in messages.catalog() if k.startswith("by_hand_"))


CASE = """

@test_case(points=None, hidden=False)
def test_QUESTION_as_graded(env):
    import json
    KIT = KIT_SOURCES
    MESSAGES = KIT_MESSAGES

    def notebook():
        grader = env.get("grader")
        for path in (getattr(grader, "_notebook", None), env.get("_kit_path")):
            try:
                with open(path, encoding="utf-8") as f:
                    return json.load(f)
            except Exception:
                pass
        nb = env.get("_kit_nb")
        return nb if isinstance(nb, dict) and nb.get("cells") else None

    nb = notebook()
    if nb is None:
        return
    form = {}
    exec(KIT["form"], form)
    cells = []
    for i, cell in enumerate(nb.get("cells") or [], start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        text = cell.get("source", "")
        text = "".join(text) if isinstance(text, list) else str(text)
        text = text.replace("\\r\\n", "\\n").replace("\\r", "\\n")
        tags = (cell.get("metadata") or {}).get("tags") or []
        label = form["shown_label"](cell.get("execution_count"), text)
        if "kit-provided" not in tags and not text.lstrip().startswith("# PROVIDED:"):
            cells.append((i, label, text, tags))

    def word(label):
        return MESSAGES["cell_shown"].format(label=label)

    said = []
    named = {}
    exec(KIT["question_name"], named)
    for found in form["findings"]([(i, label, text) for i, label, text, _ in cells]):
        if "QUESTION" in {named["question_name"](n) for n in found["names"]}:
            fields = dict(found["fields"], cell=word(found["fields"]["cell"]))
            if "later" in fields:
                fields["later"] = word(fields["later"])
            said.append(MESSAGES[found["key"]].format(**fields))
    if "by_hand" in KIT:
        typed = {}
        exec(KIT["by_hand"], typed)
        kind = typed[KIT_FORM]
        marked = [(i, label, text) for i, label, text, tags in cells if typed["is_marked"](text, tags, kind)]
        answer = typed["read"](marked[:typed["MAX_LISTED"]], len(marked), kind)
        problem = (answer or {}).get("problem")
        if problem:
            where = ", ".join(word(label) for label in answer["labels"])
            reason = MESSAGES[problem["key"]].format(**problem["fields"])
            said.append(
                MESSAGES[KIT_UNREADABLE].format(cell=where) + " " + MESSAGES["cause_marker"] + " "
                + MESSAGES[KIT_RULE].format(reason=reason)
            )
    assert not said, " ".join(said)
"""


def case_source(question, lang):
    """The `as_graded` test case of `question` in edition `lang` (appended to its public test)."""
    sources = {"form": _compact(form), "question_name": "import re\n" + inspect.getsource(detect.question_name)}
    keys = list(KEYS)
    fill = {"KIT_FORM": "None", "KIT_UNREADABLE": "None", "KIT_RULE": "None"}
    if question in TYPED_KEYS:
        sources["by_hand"] = _compact(by_hand)
        unreadable, rule = TYPED_KEYS[question]
        keys += [unreadable, rule, *_reasons()]
        kind = "BY_HAND"
        if question != by_hand.QUESTION:  # a word form: made from its declaration's plain data, as the reader's
            kind = question.upper()
            sources["by_hand"] += f"\n{kind} = Form.from_data({question!r}, {declarations.typed_forms()[question]!r})"
        fill = {"KIT_FORM": repr(kind), "KIT_UNREADABLE": repr(unreadable), "KIT_RULE": repr(rule)}
    words = {k: _template(k, lang) for k in keys}
    src = CASE.replace("QUESTION", question)
    for name, value in fill.items():
        src = src.replace(name, value)
    return src.replace("KIT_SOURCES", repr(sources)).replace("KIT_MESSAGES", repr(words))


def _template(key, lang):
    """The catalog's template of `key` in `lang`, its {fields} unfilled."""
    entry = messages.catalog()[key]
    return entry.get(lang) or entry["en"]


def add(nb, lang):
    """Append each question's `as_graded` case to its public test in the notebook's metadata (in place)."""
    tests = nb.metadata.get("otter", {}).get("tests", {})
    for question, spec in tests.items():
        case = case_source(question, lang)
        if isinstance(spec, str):
            tests[question] = spec.rstrip("\n") + "\n" + case
        elif isinstance(spec, dict) and isinstance(spec.get("src"), str):
            spec["src"] = spec["src"].rstrip("\n") + "\n" + case
