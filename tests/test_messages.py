"""Every text a student reads exists in pt-BR and English, from one catalog
(`autograder/messages/*.yml`), and the hidden suites write theirs only
through it (`t(key, ...)`, rendered when a check fails).

Read from the source (AST) where it can be: the keys the code names, the
messages the suites fail with, the labels of their checks; then one buggy
submission graded in both languages: the same scores, and pt-BR feedback
with no English prose outside code.
"""

import ast
import json
import re
import string

import pytest
import yaml

from autograder import layout, messages
from autograder.audit.catalog import fill, load_entry, reference_sources
from autograder.audit.examples import TEMPLATES
from autograder.judge.scoring import check_label
from conftest import grade, suite_files

PACKAGE = layout.PACKAGE
PRIVATE = layout.PRIVATE
SUITES_YML = PACKAGE / "messages" / "suites.yml"


def _fields(template):
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


def _suites_keys():
    """The suites' words: suites.yml (the shared library's) and each assignment's messages.yml."""
    out = {}
    for path in [SUITES_YML, *layout.assignment_messages()]:
        out.update(yaml.safe_load(path.read_text(encoding="utf-8")) or {})
    return out


def _package_files():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if layout.CATALOG_FOLDER in rel.parts[:-1]:
            continue  # catalog entries are student code, not the kit's
        yield path


def _suite_files():
    return suite_files()


def _test_functions():
    """{test function name: file} of every hidden suite."""
    out = {}
    for path in suite_files("test_*.py"):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                out.setdefault(node.name, path.relative_to(PRIVATE))
    return out


def _is_t_call(node):
    f = node.func
    return isinstance(node, ast.Call) and (
        (isinstance(f, ast.Name) and f.id == "t") or (isinstance(f, ast.Attribute) and f.attr == "t")
    )


# -- (1) the catalog -------------------------------------------------------------
def test_the_catalog_loads_and_every_key_has_both_languages_with_the_same_fields():
    cat = messages.catalog()
    suites = _suites_keys()
    assert len(suites) >= 150, len(suites)
    for key, entry in cat.items():
        assert set(entry) == {"en", "pt-BR"}, key
        assert _fields(entry["en"]) == _fields(entry["pt-BR"]), key
        assert entry["en"].strip() and entry["pt-BR"].strip(), key
    for key, entry in suites.items():
        assert cat[key] == entry, key  # loaded as written, from this file only
    assert "cause_marker" in cat  # the suites join symptom and cause with it


def test_each_suites_message_renders_in_both_languages():
    for key, entry in _suites_keys().items():
        fields = {f: f"<{f}>" for f in _fields(entry["en"])}
        for lang in messages.LANGUAGES:
            text = messages.t(key, lang, **fields)
            assert all(f"<{f}>" in text for f in fields), (key, lang)
    with messages.language("en"):
        assert messages.t("cause_mask_ignored").startswith("the mask is not applied")
    with messages.language("pt-BR"):
        assert messages.t("cause_mask_ignored").startswith("a máscara não é aplicada")


# -- (2) keys named in the code ----------------------------------------------------
def test_every_literal_key_exists_and_every_suites_key_is_used():
    cat = messages.catalog()
    missing, strings = [], set()
    for path in _package_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                strings.add(node.value)
            if isinstance(node, ast.Call) and _is_t_call(node) and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value not in cat:
                    missing.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {first.value}")
    assert not missing, f"t() of keys the catalog lacks: {missing}"
    # check_<name>: read by scoring.check_label from the test's name (see the check-label test)
    unused = sorted(k for k in _suites_keys() if k not in strings and not k.startswith("check_"))
    assert not unused, f"suites.yml keys no code names: {unused}"


# -- (3) the suites fail only with catalog text --------------------------------------
PROSE = re.compile(r"[A-Za-z]{2,}")


def _prose_in(node):
    """String pieces with words in an expression, not counting what nested calls
    build (t(...), describe_call(...), with_cause(...): they are checked elsewhere)."""
    found = []
    if isinstance(node, ast.Call):
        return found
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value] if PROSE.search(node.value) else []
    if isinstance(node, ast.JoinedStr):
        for v in node.values:
            if isinstance(v, ast.FormattedValue):
                found += _prose_in(v.value)
            else:
                found += _prose_in(v)
        return found
    for child in ast.iter_child_nodes(node):
        found += _prose_in(child)
    return found


def test_no_fail_call_in_the_suites_takes_english_prose():
    bad = []
    for path in _suite_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if name in ("fail", "caused"):
                # `compared` is data (`failure.COMPARED`), not words a student reads
                for arg in list(node.args) + [k.value for k in node.keywords if k.arg != "compared"]:
                    bad += [f"{path.relative_to(PRIVATE)}:{node.lineno} {s!r}" for s in _prose_in(arg)]
    assert not bad, f"failure messages written in the code, not the catalog: {bad}"


NEEDLES = ("ERROR_CAUSES", "SOURCE_FINDINGS")


def _error_cause_needles(tree):
    """The string constants of NEEDLES: the English text of torch's errors and of the source
    checks, matched (a catalog key says what it means), never shown as written."""
    out = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(x, "id", None) in NEEDLES for x in node.targets):
            out |= {id(n) for n in ast.walk(node.value) if isinstance(n, ast.Constant)}
    return out


def test_no_english_prose_is_left_in_the_suites_code():
    """Three words or more in a string literal are a message: they belong in suites.yml
    (docstrings, torch's error text in ERROR_CAUSES and pytest's marker notes aside)."""
    words = re.compile(r"[A-Za-z]{2,}[ ,;:]+[A-Za-z]{2,}[ ,;:]+[A-Za-z]{2,}")
    bad = []
    for path in _suite_files():
        tree = ast.parse(path.read_text())
        skip = _error_cause_needles(tree)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(node) is not None:
                skip.add(id(node.body[0].value))
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "addinivalue_line":
                skip |= {id(n) for n in ast.walk(node)}
        bad += [
            f"{path.relative_to(PRIVATE)}:{n.lineno} {n.value[:60]!r}"
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip and words.search(n.value)
        ]
    assert not bad, f"English prose in the suites' code: {bad}"


def test_no_suite_function_hides_t_under_a_local_name():
    """A parameter or local called `t` would make `t("key")` call a tensor."""
    bad = []
    for path in _suite_files():
        tree = ast.parse(path.read_text())
        if not any(isinstance(n, ast.ImportFrom) and any(a.name == "t" for a in n.names) for n in tree.body):
            continue
        for fn in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Lambda))):
            args = fn.args
            names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
            names += [n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
            if "t" in names:
                bad.append(f"{path.relative_to(PRIVATE)}:{fn.lineno}")
    assert not bad, bad


# -- (4) every check has a label -------------------------------------------------------
def test_every_test_function_has_a_check_label_in_both_languages():
    cat = messages.catalog()
    tests = _test_functions()
    assert len(tests) >= 25, tests
    for name, where in tests.items():
        key = f"check_{name.removeprefix('test_')}"
        assert key in cat, f"{where}: {name} has no label {key} in suites.yml"
        assert cat[key]["en"] == name.removeprefix("test_").replace("_", " "), key  # English as before
        with messages.language("pt-BR"):
            assert check_label(name) == cat[key]["pt-BR"]
        with messages.language("en"):
            assert check_label(name) == cat[key]["en"]
    labels = {k.removeprefix("check_") for k in _suites_keys() if k.startswith("check_")}
    stray = sorted(labels - {n.removeprefix("test_") for n in tests})
    assert not stray, f"labels of no test function: {stray}"
    assert check_label("test_no_such_check_here") == "no such check here"


# -- (5) one buggy submission in both languages ------------------------------------------
ENGLISH = (
    "the",
    "expected",
    "values",
    "differ",
    "should",
    "must",
    "likely",
    "cause",
    "returned",
    "got",
    "instead",
    "weights",
)
BUGS = ("causal_mask_triu", "padding_mask_off_by_one", "sdpa_mask_inverted")  # one function each


def _call_descriptions_removed(line):
    """The line without code: `...`, call descriptions `name(...)` (nested parentheses
    too), `-> output` names and identifiers with an underscore or a dot."""
    line = re.sub(r"`[^`]*`", " ", line)
    while True:
        m = re.search(r"[A-Za-z_][\w.]*\(", line)
        if not m:
            break
        depth, i = 0, m.end() - 1
        for i in range(m.end() - 1, len(line)):
            depth += {"(": 1, ")": -1}.get(line[i], 0)
            if depth == 0:
                break
        line = line[: m.start()] + " " + line[i + 1 :]
    line = re.sub(r"->\s*\w+", " ", line)
    return re.sub(r"\b\w*[_.]\w*\b", " ", line)


@pytest.fixture(scope="module")
def graded_both(tmp_path_factory):
    assignment = "scaled_dot_product"
    sources = reference_sources(assignment)
    for bug in BUGS:
        entry = load_entry(layout.catalog(assignment) / f"{bug}.py")
        sources.update(entry.sources)
    template = TEMPLATES / f"{assignment}.ipynb"
    if not template.exists():  # one edition per language: the English one
        template = TEMPLATES / "en" / f"{assignment}.ipynb"
    nb = fill(json.loads(template.read_text()), sources)
    path = tmp_path_factory.mktemp("bilingual") / f"{assignment}.ipynb"
    path.write_text(json.dumps(nb))
    return {lang: grade(path, lang=lang) for lang in ("pt-BR", "en")}


@pytest.mark.slow
def test_a_buggy_submission_scores_the_same_in_both_languages(graded_both):
    pt, en = graded_both["pt-BR"], graded_both["en"]
    scores = {q: (r.score, r.max_score) for q, r in en.questions.items()}
    assert scores == {q: (r.score, r.max_score) for q, r in pt.questions.items()}
    assert all(r.score < r.max_score for r in en.questions.values()), scores  # each question has its bug
    for q in en.questions:
        assert len(en.questions[q].lines) == len(pt.questions[q].lines), q


@pytest.mark.slow
def test_the_english_feedback_reads_as_before(graded_both):
    lines = [line for r in graded_both["en"].questions.values() for line in r.lines]
    text = "\n".join(lines)
    assert "Likely cause: True above the diagonal: triu instead of tril?" in text
    assert "Likely cause: True where position <= length: off by one" in text
    assert "mask polarity inverted: True means 'may attend'." in text
    assert "entries differ from the expected mask; the first at index" in text
    assert "values differ from the reference; max abs error" in text
    assert any(line.startswith("FAIL test_shapes_and_values") for line in lines), lines


@pytest.mark.slow
def test_the_portuguese_feedback_has_no_english_prose(graded_both):
    """The FAIL lines and the likely-cause lines (the suites' text), outside code."""
    lines = [line for r in graded_both["pt-BR"].questions.values() for line in r.lines]
    cause = messages.t("cause_marker", "pt-BR").rstrip(":")
    fail = messages.t("fail_prefix", "pt-BR") + " "
    ours = [line for line in lines if line.startswith((cause, fail))]
    assert sum(line.startswith(fail) for line in ours) >= 6, lines
    assert sum(line.startswith(cause) for line in ours) >= 3, lines
    for line in ours:
        prose = _call_descriptions_removed(line.split(": ", 1)[1] if line.startswith(fail) else line)
        found = sorted({w for w in re.findall(r"[A-Za-z]+", prose) if w.lower() in ENGLISH})
        assert not found, f"English {found} in: {line}"
    text = "\n".join(ours)
    assert "True acima da diagonal: triu em vez de tril?" in text
    assert "entradas diferem da máscara esperada" in text
    assert "valores diferem da referência; erro absoluto máximo" in text


@pytest.mark.parametrize(
    "text, line",
    [
        ("a: [unclosed\n", "x/messages.yml is not valid YAML"),
        ('x_key:\n  en: "{a"\n  pt-BR: "{a"\n', "x/messages.yml: message 'x_key' is no template"),
        ("fail_prefix:\n  en: x\n  pt-BR: y\n", "message 'fail_prefix' is defined in judge.yml and in x/messages.yml"),
        ("k:\n  en: x\n", "x/messages.yml: message 'k' needs exactly"),
    ],
)
def test_a_bad_assignment_messages_file_stops_every_verb_in_one_line(tmp_path, monkeypatch, capsys, text, line):
    """An assignment's own messages.yml (what staff write when adding one) is read before any verb
    runs: a broken one is one line naming it, exit 2, never a traceback in the middle of a grade."""
    from autograder import cli

    own = tmp_path / "x" / "messages.yml"
    own.parent.mkdir()
    own.write_text(text)
    monkeypatch.setattr(layout, "assignment_messages", lambda: [own])
    messages.catalog.cache_clear()
    try:
        assert cli.main(["check", str(tmp_path / "none.ipynb")]) == 2
    finally:
        messages.catalog.cache_clear()
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("check: ") and line in err, err
