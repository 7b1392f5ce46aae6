"""Similar submissions: evidence for a person to look at, never a verdict.

Each submission's graded functions are reduced to fingerprints and compared with every
other submission's:

1. **One form, names normalised** (`canonical`, `tokens`): the code printed again from
   its syntax tree (comments, layout, quoting and redundant parentheses gone), then
   Python's tokens, docstrings dropped; every name a student chooses (parameters,
   locals) becomes `v`, while what the code calls keeps its name (attributes after a
   dot, keyword arguments, `torch`, `math`, `F`, builtins); strings become `s`.
2. **Fingerprints** (`fingerprints`): winnowing (Schleimer, Wilkerson and Aiken, SIGMOD
   2003) within each statement: the hashes of every `K` consecutive tokens, and of each
   window of `W` the smallest (`W` = 1 keeps them all: a class's code is small, and a
   window of 4 measured worse). Statements moved around keep their fingerprints.
3. **Starter code subtracted**: the fingerprints of the student template's stub of each
   function (its signature, docstring, `raise NotImplementedError`).
4. **What the class writes alike weighs little**: a fingerprint weighs log(N / how many
   of the N submissions hold it); what everyone writes (the canonical SDPA is five
   lines) says nothing of who copied whom, what two alone share weighs most.
5. **A pair's similarity** is the weight both hold over the weight either holds
   (weighted Jaccard); pairs at `THRESHOLD` or above are listed, with the lines that
   hold shared fingerprints marked; a submission with less than `MIN_WEIGHT` of its own
   (the stubs handed in) is in none.

The figures behind `THRESHOLD` and `W` (recall on planted copies, false pairs among
independent solutions, on synthetic classes of 300, against copydetect):
`python bench/similarity.py`, docs/pages/measurements.md.
"""

import ast
import builtins
import hashlib
import io
import json
import keyword
import math
import tokenize
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

K = 5  # tokens per k-gram
W = 1  # k-grams per winnowing window (1: every k-gram; bench/similarity.py --window)
THRESHOLD = 0.9  # a pair's similarity at which it is listed (bench/similarity.py)
# a fingerprint more than this share of the class holds weighs nothing (1.0: none; `--common 0.2`
# measured worse: recall 82 %, false pairs x40, as pairs are then judged on a few rare prints)
COMMON = 1.0
MIN_WEIGHT = 10.0  # a submission with less weight of its own (a template barely touched) is in no pair
MAX_SOURCE = 20_000  # characters of one function read (the rest is not compared)
OPENS, CLOSES = frozenset("([{"), frozenset(")]}")
KEPT_NAMES = frozenset(dir(builtins)) | {"torch", "math", "F", "nn", "np", "functional", "self", "super"}


# -- tokens and fingerprints -------------------------------------------------------------
def _docstrings(source):
    """(line, column) where each string standing alone as a statement starts (docstrings)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    return {
        (node.lineno, node.col_offset)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }


def canonical(source):
    """`source` printed again from its syntax tree (comments gone, one layout, one quoting,
    no redundant parentheses), or as it is where it does not parse."""
    source = source[:MAX_SOURCE]
    try:
        return ast.unparse(ast.parse(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return source


def tokens(source):
    """[(normalised token, line)] of `source` (as given: `canonical` first for comparing), or []
    when it does not tokenize."""
    source = source[:MAX_SOURCE]
    docstrings = _docstrings(source)
    raw = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.ENDMARKER:
                break
            if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                continue
            if tok.type == tokenize.STRING and tok.start in docstrings:
                continue
            raw.append(tok)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []
    out, depth = [], 0
    for n, tok in enumerate(raw):
        text = tok.string
        depth += (text in OPENS) - (text in CLOSES)
        if tok.type == tokenize.STRING:
            text = "s"
        elif tok.type == tokenize.NAME and not keyword.iskeyword(text):
            after_dot = n > 0 and raw[n - 1].string == "."
            keyword_arg = depth > 0 and n + 1 < len(raw) and raw[n + 1].string == "="
            if not (after_dot or keyword_arg or text in KEPT_NAMES):
                text = "v"
        out.append((text, tok.start[0]))
    return out


def _hash(gram):
    return int.from_bytes(hashlib.blake2b("\x1f".join(gram).encode(), digest_size=8).digest(), "big")


def fingerprints(toks, k=K, w=W):
    """{fingerprint: set of lines it covers} of a token list: winnowing within each line (a
    statement, in `canonical` form), so statements moved around keep their fingerprints; a
    line shorter than `k` tokens is one gram."""
    by_line = {}
    for text, line in toks:
        by_line.setdefault(line, []).append(text)
    chosen = {}
    for line, texts in by_line.items():
        grams = [_hash(texts[i : i + k]) for i in range(max(1, len(texts) - k + 1))]
        for start in range(max(1, len(grams) - w + 1)):
            window = grams[start : start + w]
            chosen.setdefault(min(window), set()).add(line)
    return chosen


# -- a class's code ------------------------------------------------------------------------
def function_sources(notebook, names):
    """{name: source of its last definition} among the code cells of a notebook (a dict)."""
    found = {}
    for cell in notebook.get("cells") or []:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else str(src)
        try:
            tree = ast.parse(src[: MAX_SOURCE * 4])
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        lines = src.split("\n")
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in names:
                found[node.name] = "\n".join(lines[node.lineno - 1 : node.end_lineno])
    return found


def read_notebook(path, limit_mb=64):
    """A notebook file as a dict, or None (too big, not JSON, not a notebook)."""
    try:
        path = Path(path)
        if path.stat().st_size > limit_mb << 20:
            return None
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


# -- the comparison ------------------------------------------------------------------------
@dataclass
class Pair:
    """Two submissions whose graded functions share rare code: `similarity` (0 to 1) and,
    per function both wrote, (similarity of that function, lines of a's code, lines of b's
    code that hold shared fingerprints)."""

    a: str
    b: str
    similarity: float
    functions: dict = field(default_factory=dict)


def _prints(per, starter, window=W):
    """{(function, fingerprint): lines} of one submission, its starter code subtracted."""
    out = {}
    for function, source in per.items():
        stub = fingerprints(tokens(canonical(starter.get(function, ""))), w=window)
        for h, lines in fingerprints(tokens(canonical(source)), w=window).items():
            if h not in stub:
                out[(function, h)] = lines
    return out


def compare(sources, starter=None, threshold=THRESHOLD, min_weight=MIN_WEIGHT, common=COMMON, window=W):
    """[Pair] at `threshold` or above, most similar first, from {id: {function: source}} and
    the starter code {function: source}. A fingerprint weighs log(N / how many of the N
    submissions hold it), nothing where more than `common` of them do: what the class writes
    alike says nothing of who copied whom, what two alone share weighs most. A pair's similarity: the weight both hold over the smaller one's weight."""
    starter = starter or {}
    prints = {sid: _prints(per, starter, window) for sid, per in sorted(sources.items())}
    held = Counter(key for fp in prints.values() for key in fp)
    n = len(prints)
    weight = {key: math.log(n / count) if count <= common * n else 0.0 for key, count in held.items()}
    totals = {sid: sum(weight[key] for key in fp) for sid, fp in prints.items()}
    pairs = []
    for a, b in combinations(prints, 2):
        if min(totals[a], totals[b]) < min_weight:
            continue
        both = prints[a].keys() & prints[b].keys()
        shared = sum(weight[key] for key in both)
        similarity = shared / (totals[a] + totals[b] - shared)
        if similarity >= threshold:
            pairs.append(Pair(a, b, round(similarity, 3), _per_function(prints[a], prints[b], both, weight)))
    pairs.sort(key=lambda p: (-p.similarity, p.a, p.b))
    return pairs


def _per_function(pa, pb, both, weight):
    out = {}
    for function in sorted({f for f, _ in pa} & {f for f, _ in pb}):
        mine = [k for k in both if k[0] == function]
        wa = sum(weight[k] for k in pa if k[0] == function)
        wb = sum(weight[k] for k in pb if k[0] == function)
        low = min(wa, wb)
        share = sum(weight[k] for k in mine) / low if low > 0 else 0.0
        lines_a = set().union(*(pa[k] for k in mine)) if mine else set()
        lines_b = set().union(*(pb[k] for k in mine)) if mine else set()
        out[function] = (round(share, 3), lines_a, lines_b)
    return out


# -- a graded folder's class ---------------------------------------------------------------
def graded_names(notebook):
    """The functions and classes defined in a notebook's cells tagged kit-solution (the cells a
    student writes a graded function in)."""
    names = set()
    for cell in notebook.get("cells") or []:
        if isinstance(cell, dict) and "kit-solution" in ((cell.get("metadata") or {}).get("tags") or []):
            src = cell.get("source", "")
            try:
                tree = ast.parse("".join(src) if isinstance(src, list) else str(src))
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            names |= {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    return names


def starter_code(assignment, root=None):
    """{graded function: its stub} from the student template, or None where the template is not
    there (the public part of the kit, an install without the checkout)."""
    root = Path(root) if root else Path(__file__).resolve().parents[2]
    nb = read_notebook(root / "student_template" / "en" / f"{assignment}.ipynb")
    return None if nb is None else function_sources(nb, graded_names(nb))


def folder_class(out_dir, root=None):
    """{assignment: ({id: {function: source}}, starter or None)} of a folder `grade` wrote: each
    submission's notebook is read where its results.json says it was graded from
    (`extra_data.submission.path`); a notebook no longer there is left out. Without the
    student template (None) the graded functions are the ones each notebook's kit-solution
    cells define, and no starter code is subtracted."""
    from autograder.report.load import read_results

    classes = {}
    for path in sorted(Path(out_dir).glob("*/results.json")):
        try:
            data = read_results(path)
        except ValueError:
            continue
        assignment = data.get("assignment")
        where = ((data.get("extra_data") or {}).get("submission") or {}).get("path")
        if not isinstance(assignment, str) or not isinstance(where, str) or not where.endswith(".ipynb"):
            continue
        if assignment not in classes:
            classes[assignment] = ({}, starter_code(assignment, root))
        sources, starter = classes[assignment]
        nb = read_notebook(where)
        if nb is not None:
            found = function_sources(nb, set(starter) if starter is not None else graded_names(nb))
            if found:
                sources[path.parent.name] = found
    return classes
