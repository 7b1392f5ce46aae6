"""The CLI speaks the course's language throughout: every line a verb prints (`print`,
`say`) comes from the message catalog, never an English sentence written in the code.

What a line may hold outside `t(...)` and the other calls that fill it: the verb's own name
as a prefix ("grade: ", "report: "), punctuation and fields. The staff's build, audit, demo
and new tools are out of this test's reach (their output is for the kit's developers and
the authors of assignments)."""

import ast
import re

from autograder import cli
from conftest import ROOT

PACKAGE = ROOT / "autograder"
NOT_THE_CLI = ("private", "audit", "demo", "build", "new")
PRINTERS = {"print", "say", "_say"}
# the prefixes a line may start with: the verbs' names, and the kit's own
PREFIXES = {*cli.VERBS, "autograder", "kit"}
# a kit fault's log line (the sandbox client's, on stderr beside an internal_error verdict):
# for the kit's developers, like the audit's
DEVELOPERS_ONLY = {("sandbox/client.py", "_unexpected")}


def literal_text(node):
    """The string constants of a printed expression, without those inside a call (a `t(...)`
    key, a `display(...)` argument) or a format spec."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return [v.value for v in node.values if isinstance(v, ast.Constant)]
    if isinstance(node, ast.BinOp):
        return literal_text(node.left) + literal_text(node.right)
    if isinstance(node, ast.IfExp):
        return literal_text(node.body) + literal_text(node.orelse)
    return []


def english_lines():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.split("/")[0] in NOT_THE_CLI:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = {
            id(node)
            for fn in ast.walk(tree)
            if isinstance(fn, ast.FunctionDef) and (rel, fn.name) in DEVELOPERS_ONLY
            for node in ast.walk(fn)
        }
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and node.args) or id(node) in skipped:
                continue
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name not in PRINTERS:
                continue
            words = set(re.findall(r"[A-Za-z]{2,}", " ".join(literal_text(node.args[0])))) - PREFIXES
            if words:
                found.append(f"autograder/{rel}:{node.lineno}: {sorted(words)}")
    return sorted(set(found))


def test_every_line_the_cli_prints_comes_from_the_catalog():
    assert english_lines() == []


def test_the_scan_finds_an_english_line():
    tree = ast.parse('print(f"grade: wrote {n} results to {out}")\nprint(t("grade_wrote", n=1))')
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "print"]
    texts = [set(re.findall(r"[A-Za-z]{2,}", " ".join(literal_text(c.args[0])))) - PREFIXES for c in calls]
    assert texts == [{"wrote", "results", "to"}, set()]
