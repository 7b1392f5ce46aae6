"""The pt-BR sources use one term per concept and no English in prose.

Every pt-BR text a student reads is read from its source (no kernel, no grading): the
translations `assignments/*/*.pt-BR.yml` (cells, docstrings, comments, messages,
strings), the pt-BR side of the message catalog `autograder/messages/*.yml`, the build's
texts `autograder/build/texts.yml`, and the generated notebooks `student_template/pt-BR/`
(markdown, and the comments and strings of code cells: the provided code too). Prose is
what is left once code is taken out (code spans, math, fields, identifiers, calls); in it
no rival of a term of `assignments/glossary-pt-BR.yml` may appear, and no English word
(tests/ptbr.py's detector, shared with the feedback test)."""

import io
import json
import re
import tokenize

import pytest
import yaml

from autograder import layout
from conftest import ROOT
from ptbr import english_in

GLOSSARY = ROOT / "assignments" / "glossary-pt-BR.yml"
LANG = "pt-BR"


def glossary():
    return yaml.safe_load(GLOSSARY.read_text(encoding="utf-8"))


def rival_patterns(data):
    """[(rival, concept, term, compiled pattern)]: whole words, any case."""
    return [
        (rival, concept, spec["term"], re.compile(rf"(?<![\w-]){re.escape(rival)}(?![\w-])", re.I))
        for concept, spec in data["terms"].items()
        for rival in spec["rivals"]
    ]


# -- prose out of a source -----------------------------------------------------------------

MARKDOWN_CODE = re.compile(r"```.*?```|`[^`\n]*`|\$\$.*?\$\$|\$[^$\n]*\$|https?://\S+|\]\([^)]*\)|<[^>\n]*>", re.S)
FIELD = re.compile(r"\{[^{}]*\}")
SECTION = re.compile(r"^\s*(Args|Returns|Raises|Attributes):", re.M)  # a docstring's sections (Google style)


def prose_of_markdown(text):
    return MARKDOWN_CODE.sub(" ", text)


def prose_of_plain(text):
    """A docstring, a message or a comment: code spans and {fields} out (the detector takes
    out calls, dotted names and attributes)."""
    return SECTION.sub(" ", FIELD.sub(" ", MARKDOWN_CODE.sub(" ", text)))


def prose_of_code(src):
    """The comments of Python `src` and its strings that hold a space (names such as a
    colour map are not prose); f-strings without their {fields}."""
    out = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(src).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return [src]
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            out.append(tok.string[1:])
        elif tok.type == tokenize.STRING:
            body = re.sub(r"^[rRbBuUfF]*('''|\"\"\"|'|\")|('''|\"\"\"|'|\")$", "", tok.string)
            if re.search(r"\s", body) and not _is_code(body):
                out.append(prose_of_plain(body))
        elif tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
            out.append(prose_of_plain(tok.string))
    return out


# -- the sources ---------------------------------------------------------------------------


def sources():
    """[(file, where, [prose])] of every pt-BR text."""
    out = []
    for path in sorted((ROOT / "assignments").glob("*/*.pt-BR.yml")):
        rel = path.relative_to(ROOT).as_posix()
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for section, entries in data.items():
            for key, entry in (entries or {}).items():
                text, where = entry["text"], f"{section}.{key}"
                if section == "cells":
                    code = not re.match(r"\s*(#+ |\*\*|[A-ZÀ-Ú])", text) or text.lstrip().startswith("# kit-")
                    code = code or _is_python(text)
                    out.append((rel, where, prose_of_code(text) if code else [prose_of_markdown(text)]))
                elif isinstance(text, dict):
                    out += [(rel, f"{where}.{k}", [prose_of_plain(v)]) for k, v in text.items()]
                elif isinstance(text, list):
                    out.append((rel, where, [prose_of_plain(t) for t in text]))
                else:
                    out.append((rel, where, [prose_of_plain(text)]))
    for path in [*sorted((ROOT / "autograder" / "messages").glob("*.yml")), *layout.assignment_messages()]:
        rel = path.relative_to(ROOT).as_posix()
        for key, entry in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).items():
            out.append((rel, key, [prose_of_plain(entry[LANG])]))
    path = ROOT / "autograder" / "build" / "texts.yml"
    for key, entry in yaml.safe_load(path.read_text(encoding="utf-8")).items():
        text = entry[LANG]
        out.append(
            (
                path.relative_to(ROOT).as_posix(),
                key,
                prose_of_code(text) if _is_python(text) else [prose_of_plain(text)],
            )
        )
    for path in sorted((ROOT / "student_template" / LANG).glob("*.ipynb")):
        rel = path.relative_to(ROOT).as_posix()
        for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
            src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            where = f"cell [{i}] ({cell.get('id')})"
            if cell["cell_type"] == "markdown":
                out.append((rel, where, [prose_of_markdown(src)]))
            elif cell["cell_type"] == "code":
                out.append((rel, where, prose_of_code(src)))
    return out


def _is_code(text):
    """A string that is itself code (an import the init cell edits out, say), not prose."""
    try:
        compile(text, "<string>", "exec")
    except SyntaxError:
        return False
    return True


def _is_python(text):
    try:
        compile(text, "<text>", "exec")
    except SyntaxError:
        return False
    return "\n" in text.strip() or text.lstrip().startswith("#")


# -- the checks ----------------------------------------------------------------------------


def rivals_in(prose, patterns):
    return [(rival, term) for rival, _, term, pattern in patterns if pattern.search(prose)]


def english_in_prose(prose, quoted=()):
    for q in quoted:
        prose = prose.replace(q, " ")
    return [w for line in prose.splitlines() for w in english_in(line)]


def findings(items, data):
    patterns = rival_patterns(data)
    quoted = data.get("quoted_english") or {}
    out = []
    for rel, where, proses in items:
        allowed = quoted.get("*", []) + quoted.get(rel, [])
        for prose in proses:
            out += [f"{rel}: {where}: '{r}' (the kit writes '{t}')" for r, t in rivals_in(prose, patterns)]
            words = english_in_prose(prose, allowed)
            if words:
                out.append(f"{rel}: {where}: English {sorted(set(words))}")
    return sorted(set(out))


def test_the_glossary_names_one_term_and_its_rivals_per_concept():
    data = glossary()
    assert data["terms"]
    for concept, spec in data["terms"].items():
        assert spec["term"] and spec["rivals"], concept
        assert not rivals_in(spec["term"], rival_patterns(data)), f"{concept}: its term is a rival"


def test_the_checks_find_a_rival_and_english():
    data = glossary()
    items = [
        ("x.pt-BR.yml", "cells.cell-001", [prose_of_markdown("Cada posição de origem recebe um peso.")]),
        ("x.pt-BR.yml", "cells.cell-002", prose_of_code("# the model learns\nx = 1")),
        ("x.pt-BR.yml", "messages.test_x.y", [prose_of_plain("Levante um ValueError e aplique o softmax.")]),
    ]
    found = findings(items, data)
    assert "x.pt-BR.yml: cells.cell-001: 'origem' (the kit writes 'fonte')" in found
    assert "x.pt-BR.yml: cells.cell-002: English ['the']" in found
    assert any("'levante'" in f for f in found) and any("'o softmax'" in f for f in found)
    # code is not prose: rivals and English inside code spans, math and identifiers pass
    clean = [
        ("x", "y", [prose_of_markdown("Use `features = x.view(B, T)` e $the$: a softmax da fonte.")]),
        ("x", "y", prose_of_code("features = origem(x)  # a fonte\nname = 'the'")),
    ]
    assert findings(clean, data) == []


def test_every_pt_br_source_uses_the_glossary_and_no_english():
    items = sources()
    files = {rel for rel, _, _ in items}
    assert any(f.startswith("student_template/pt-BR/") for f in files) and len(files) >= 12, files
    found = findings(items, glossary())
    assert not found, f"{len(found)} finding(s):\n" + "\n".join(found)


@pytest.mark.parametrize("rival", ["origem", "Levante", "o softmax", "features"])
def test_each_rival_named_by_the_issue_is_a_rival(rival):
    assert any(rival.lower() == r.lower() for r, _, _, _ in rival_patterns(glossary()))


# -- what the editor's pass fixed (issue 36, item 6) -----------------------------------------

# a decimal point in prose; a list of values in brackets is a tensor as Python prints it, and
# a paper's section number ("seção 3.5") is not a decimal
DECIMAL_POINT = re.compile(r"(?<![\w.,])(?<!seção )\d+\.\d+(?![\w.])")
BRACKETS = re.compile(r"\[[^\[\]]*\]")
POSSESSIVE = re.compile(r"\b(seu|sua|seus|suas)\b", re.I)
WORD = re.compile(r"\b\w+\b")
# possessives ("o seu código, a sua função") per 1000 words of a file's pt-BR prose: a
# Brazilian instructor says "o código", "a função" when whose is plain. The pass brought the
# densest files (the build's texts: 24; the counterexamples: 38) under this.
POSSESSIVES_PER_1000 = 16


def decimal_points(prose):
    text = MARKDOWN_CODE.sub(" ", prose)
    while BRACKETS.search(text):
        text = BRACKETS.sub(" ", text)
    return DECIMAL_POINT.findall(text)


def test_the_decimal_check_tells_prose_from_code():
    assert decimal_points("cerca de 0.94 ali") == ["0.94"]
    assert decimal_points("acurácia 1.00 e 0,5") == ["1.00"]
    for clean in ("cerca de 0,94", "`lr = 0.01`", "[0.8808, [0.1192]]", "seção 3.5", "$0.5$"):
        assert decimal_points(clean) == [], clean


def test_prose_numbers_in_pt_br_use_a_decimal_comma():
    found = [
        f"{rel}: {where}: {points}"
        for rel, where, proses in sources()
        for prose in proses
        if (points := decimal_points(prose))
    ]
    assert not found, f"{len(found)} decimal point(s) in pt-BR prose (Brazil writes 0,25):\n" + "\n".join(found)


def test_no_pt_br_file_leans_on_possessives():
    per = {}
    for rel, _, proses in sources():
        n, words = per.get(rel, (0, 0))
        per[rel] = (
            n + sum(len(POSSESSIVE.findall(p)) for p in proses),
            words + sum(len(WORD.findall(p)) for p in proses),
        )
    dense = {
        rel: round(1000 * n / w, 1) for rel, (n, w) in per.items() if w >= 200 and 1000 * n / w > POSSESSIVES_PER_1000
    }
    assert not dense, f"possessives per 1000 words above {POSSESSIVES_PER_1000}: {dense}"


# -- what is printed, not only the sources (issue 36, "done when") --------------------------
# The same checks over what a pt-BR course prints at runtime: grader.check in a pt-BR notebook
# (otter-grader installed, in a kernel), the CLI's grade, report and check with the course's
# language, and the feedback pages the grade writes. Runtime text joins the sources' words
# with numbers, names and the grader's own sentences, which no source test sees.

HTML_CODE = re.compile(r"<(code|pre|style|script)\b[^>]*>.*?</\1>", re.S | re.I)


def prose_of_page(page):
    """A feedback page's text: code, counterexamples and markup out, entities read."""
    import html

    return html.unescape(prose_of_markdown(HTML_CODE.sub(" ", page)))


@pytest.fixture(scope="module")
def printed(tmp_path_factory):
    """[(what, where, [prose])] of what a pt-BR course prints from a graded batch (the pt-BR
    template untouched, a pt-BR submission with a bug): the CLI's lines and the feedback."""
    from conftest import run_cli, template

    tmp = tmp_path_factory.mktemp("printed")
    subs = tmp / "subs"
    subs.mkdir()
    (subs / "untouched.ipynb").write_text(json.dumps(template("scaled_dot_product", LANG)))
    (subs / "triu.ipynb").write_bytes(
        (ROOT / "examples" / "submissions" / "scaled_dot_product" / "causal_mask_triu_pt-BR.ipynb").read_bytes()
    )
    env = {"KIT_LANG": LANG}  # the course's language, as grading.yml sets it (the tests' default is en)
    out = []
    grade = run_cli("grade", subs, "--out", tmp / "out", "--no-progress", "--jobs", "1", check=False, env=env)
    assert grade.returncode == 0, grade.stdout + grade.stderr
    report = run_cli("report", tmp / "out", env=env)
    check = run_cli("check", subs / "triu.ipynb", check=False, env=env)
    assert check.returncode == 1 and "FALHOU" in check.stdout, check.stdout + check.stderr
    for name, proc in (("grade", grade), ("report", report), ("check", check)):
        text = (proc.stdout + proc.stderr).replace(str(tmp), " ")  # paths are not prose
        out.append((f"CLI {name}", "output", [prose_of_plain(line) for line in text.splitlines()]))
    for page in sorted((tmp / "out").glob("*/feedback.*")):
        text = page.read_text(encoding="utf-8")
        prose = prose_of_page(text) if page.suffix == ".html" else prose_of_markdown(text)
        out.append((f"feedback {page.parent.name}", page.name, prose.splitlines()))
    return out


@pytest.mark.slow
def test_what_a_pt_br_course_prints_uses_the_glossary_no_english_and_decimal_commas(printed, ptbr_buggy_run):
    """And what a pt-BR notebook's checks show in a kernel (conftest's `ptbr_buggy_run`: a bug
    its public checks fail, and a by-hand answer typed as arithmetic)."""
    from test_check_display import checks

    _, _, run = ptbr_buggy_run
    printed = printed + [
        ("grader.check", question, [prose_of_plain(line) for line in text.splitlines()])
        for question, text in checks(run).items()
    ]
    words = {}
    for what, _, proses in printed:
        words[what.split()[0]] = words.get(what.split()[0], 0) + sum(len(WORD.findall(p)) for p in proses)
    assert set(words) == {"CLI", "feedback", "grader.check"} and min(words.values()) >= 30, words
    found = findings(printed, glossary())
    found += [
        f"{what}: {where}: decimal point {points}"
        for what, where, proses in printed
        for prose in proses
        if (points := decimal_points(prose))
    ]
    assert not found, f"{len(found)} finding(s) in printed pt-BR text:\n" + "\n".join(found)
