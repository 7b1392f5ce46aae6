"""Two editions of every student notebook, English and pt-BR, from one source.

The master notebook `assignments/<name>/<name>.ipynb` (and `solutions/<name>.py`)
is written in English. Its Portuguese lives beside it in
`assignments/<name>/<name>.pt-BR.yml`, one entry per piece of text a student
reads, under five sections:

    cells:       markdown cells and hand-written code cells (experiments,
                 plots), keyed by the master cell's id; a code cell's
                 translation may change only its comments and strings
    docstrings:  the docstrings of solutions/<name>.py, keyed by function,
                 class or Class.method (the stubs and provided cells show them)
    comments:    the comments of functions given to students in a provided
                 cell, keyed by function (a list, in order)
    messages:    each public check's MESSAGES dict, keyed by the test function
    strings:     other text: `export_instructions` (the ASSIGNMENT CONFIG's)

Every entry stores `en`, a hash of the English it translates, `pt-BR`, a hash
of its own text, and `text`. A change to the English (a master cell, a
docstring, a message) that is not made in the translation, or to the
translation alone, leaves a hash that no longer matches: `build --check`
names it and exits 1. After changing both, record the pair with

    python -m autograder.build.stamp <assignment>:cells.cell-006

(a KEY prefix stamps every entry under it; without KEY only entries with no
hash yet). The build's own texts (headers, the stub's message, the init cell,
otter's cells, the sentences of the cells generated from grading.yml, see
`autograder.build.grading_text`) are in `texts.yml` (see `autograder.build.texts`).

`localize(assignment, nb, lang)` makes the pt-BR master notebook in memory
(never written beside the English one): otter assigns it like the English, so
both editions have the same cells, ids, questions, tags and otter config.
"""

import ast
import copy
import hashlib
import io
import json
import re
import string
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

import yaml

from autograder.build import grading_text, sync, texts, time_text

SOURCE = "en"
TRANSLATED = ("pt-BR",)
EDITIONS = ("pt-BR", "en")  # every edition a build writes
SECTIONS = ("cells", "docstrings", "comments", "messages", "strings")
GENERATED_TAGS = (sync.SOLUTION_TAG, sync.PROVIDED_TAG, sync.IMPORTS_TAG, *grading_text.TAGS, *time_text.TAGS)
WORD = re.compile(r"\b[A-Za-z]{3,}\b")  # a word, not an identifier such as d_head or T_q


class TranslationError(Exception):
    """A translation file cannot be read or applied."""


def digest(value):
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def translation_path(assignment, lang, root=None):
    root = Path(root) if root else sync.ASSIGNMENTS_DIR
    return root / assignment / f"{assignment}.{lang}.yml"


def _rel(path):
    path = Path(path)
    return path.relative_to(sync.COURSE_ROOT) if path.is_relative_to(sync.COURSE_ROOT) else path


# -- what needs translating (from the English sources) ----------------------------------


@dataclass
class Unit:
    section: str
    key: str
    english: object  # str, list (comments) or dict (messages)
    label: str  # how a drift line names it
    code: bool = False  # a hand-written code cell


def _module_source(assignment):
    return (sync.layout.SOLUTIONS / f"{assignment}.py").read_text(encoding="utf-8")


def _defs(tree):
    """[(qualname, node)] of top-level functions and classes and the classes' methods."""
    out = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append((node.name, node))
            if isinstance(node, ast.ClassDef):
                out += [
                    (f"{node.name}.{m.name}", m)
                    for m in node.body
                    if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                ]
    return out


def _docstring_node(node):
    body = node.body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        return body[0].value
    return None


def needs_words(text):
    return bool(WORD.search(text))


def _comments(src):
    """[(top-level def name or None, (row, col, end col), text)] of the comments of `src`
    that hold words (shape comments such as `# (B, T_q, d_v)` are left as they are)."""
    tree = ast.parse(src)
    spans = [
        (n.name, (n.decorator_list[0].lineno if n.decorator_list else n.lineno), n.end_lineno)
        for n in tree.body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type != tokenize.COMMENT:
            continue
        text = tok.string[1:].strip()
        if not needs_words(text):
            continue
        row = tok.start[0]
        owner = next((name for name, a, b in spans if a <= row <= b), None)
        out.append((owner, (row, tok.start[1], tok.end[1]), text))
    return out


def _provided_anywhere():
    """{owner assignment: {function}} of every function some assignment provides."""
    import importlib

    from autograder import config as config_mod

    out = {}
    for a in config_mod.load().assignments:
        module = importlib.import_module(f"autograder.private.solutions.{a}")
        for name in getattr(module, "PROVIDED", ()):
            owner = getattr(module, name).__module__.rsplit(".", 1)[-1]
            out.setdefault(owner, set()).add(name)
    return out


def test_messages(src):
    """[(test function, MESSAGES as a dict, {key: value node})] of a test cell."""
    out = []
    for node in ast.parse(src).body:
        if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test_")):
            continue
        for stmt in ast.walk(node):
            if isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "MESSAGES" for t in stmt.targets
            ):
                if not isinstance(stmt.value, ast.Dict):
                    raise TranslationError(f"{node.name}: MESSAGES is not a dict literal")
                msgs, nodes = {}, {}
                for k, v in zip(stmt.value.keys, stmt.value.values):
                    if not (isinstance(k, ast.Constant) and isinstance(v, ast.Constant) and isinstance(v.value, str)):
                        raise TranslationError(f"{node.name}: every MESSAGES entry must be a plain string")
                    msgs[k.value], nodes[k.value] = v.value, v
                out.append((node.name, msgs, nodes))
    return out


def _config_instructions(src):
    first, _, rest = src.partition("\n")
    if first.strip() != "# ASSIGNMENT CONFIG":
        return None
    conf = yaml.safe_load(rest) or {}
    export = conf.get("export_cell") or {}
    return export.get("instructions") if isinstance(export, dict) else None


def _code_has_text(src):
    if any(True for _ in _comments(src)):
        return True
    return any(
        isinstance(n, ast.Constant) and isinstance(n.value, str) and " " in n.value and needs_words(n.value)
        for n in ast.walk(ast.parse(src))
    )


def english_units(assignment, nb, source=None):
    """{(section, key): Unit} of everything a student reads in `nb` (the synced English
    master) and in the docstrings and provided comments of solutions/<assignment>.py
    (`source`: that module's text, where it is not on disk yet)."""
    units = {}

    def add(section, key, english, label, code=False):
        units[(section, key)] = Unit(section, key, english, label, code)

    in_tests = False
    for i, cell in enumerate(nb.cells, start=1):
        src, tags, cid = sync._src(cell), sync._tags(cell), cell.get("id")
        if cell.get("cell_type") == "raw":
            head = src.strip().split("\n")[0].strip().upper()
            in_tests = {"# BEGIN TESTS": True, "# END TESTS": False}.get(head, in_tests)
            instructions = _config_instructions(src)
            if instructions:
                add("strings", "export_instructions", instructions, "the export instructions (ASSIGNMENT CONFIG)")
            continue
        if set(tags) & set(GENERATED_TAGS) or not src.strip():
            continue
        if cid is None:
            raise TranslationError(f"{assignment}: cell {i} has no id (nbformat 4.5 ids key the translations)")
        if cell.get("cell_type") == "markdown":
            add("cells", cid, src, f"markdown cell {cid}")
        elif cell.get("cell_type") == "code" and in_tests:
            for fn, msgs, _ in test_messages(src):
                add("messages", fn, msgs, f"MESSAGES of {fn}")
        elif cell.get("cell_type") == "code" and _code_has_text(src):
            add("cells", cid, src, f"code cell {cid}", code=True)
    source = _module_source(assignment) if source is None else source
    tree = ast.parse(source)
    for qualname, node in _defs(tree):
        doc = ast.get_docstring(node, clean=True)
        if doc:
            add("docstrings", qualname, doc, f"docstring of {qualname} (solutions/{assignment}.py)")
    provided = _provided_anywhere().get(assignment, set())
    by_owner = {}
    for owner, _, text in _comments(source):
        if owner in provided:
            by_owner.setdefault(owner, []).append(text)
    for owner, comments in by_owner.items():
        add("comments", owner, comments, f"comments of {owner} (solutions/{assignment}.py, shown in a provided cell)")
    return units


# -- the translation files ---------------------------------------------------------------


def load(assignment, lang, root=None):
    """{section: {key: {"en": hash, lang: hash, "text": ...}}} (empty sections when there is no file)."""
    path = translation_path(assignment, lang, root)
    data = {}
    if path.exists():
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise TranslationError(f"{_rel(path)}: not valid YAML: {str(exc).splitlines()[0]}") from exc
    if not isinstance(data, dict) or set(data) - set(SECTIONS):
        raise TranslationError(f"{_rel(path)}: top-level keys must be among {', '.join(SECTIONS)}")
    out = {}
    for section in SECTIONS:
        entries = data.get(section) or {}
        for key, entry in entries.items():
            if not isinstance(entry, dict) or "text" not in entry:
                raise TranslationError(f"{_rel(path)}: {section}.{key} needs en, {lang} and text")
        out[section] = {str(k): v for k, v in entries.items()}
    return out


def _fields(template):
    return sorted((f, spec) for _, f, spec, _ in string.Formatter().parse(template) if f is not None)


def skeleton(src):
    """The code of `src` with every string emptied (comments are not in the AST)."""
    tree = ast.parse(src)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = ""
    return ast.dump(tree)


def _plain_strings(src):
    """Strings without a space outside f-strings: names (colour maps, styles), kept as they are."""
    tree = ast.parse(src)  # one tree: the ids below are of its live nodes (two parses could share freed ids)
    inside = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    return [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant)
        and isinstance(n.value, str)
        and id(n) not in inside
        and not re.search(r"\s", n.value)
    ]


def validate(unit, text):
    """What is wrong with `text` as the translation of `unit` (a list of short reasons)."""
    if unit.section == "messages":
        if not isinstance(text, dict):
            return ["needs one message per key"]
        if set(text) != set(unit.english):
            return [f"needs exactly the keys {', '.join(unit.english)}"]
        bad = [k for k in unit.english if not isinstance(text[k], str) or _fields(text[k]) != _fields(unit.english[k])]
        return [f"message {k} must take the same {{fields}} as the English" for k in bad]
    if unit.section == "comments":
        if not (
            isinstance(text, list) and len(text) == len(unit.english) and all(isinstance(t, str) and t for t in text)
        ):
            return [f"needs {len(unit.english)} comments, in order"]
        return ["a comment spans one line"] if any("\n" in t for t in text) else []
    if not isinstance(text, str) or not text.strip():
        return ["is empty"]
    if unit.section == "docstrings" and ('"""' in text or "\\" in text):
        return ['a docstring may not hold """ or a backslash']
    if unit.code:
        try:
            if skeleton(text) != skeleton(unit.english):
                return ["changes the code (only comments and strings may change)"]
        except SyntaxError as exc:
            return [f"is not valid Python ({exc.msg}, line {exc.lineno})"]
        if _plain_strings(text) != _plain_strings(unit.english):
            return ["changes a string that is a name (no space in it): keep those as they are"]
    if unit.section == "strings" and '"' in text:
        return ["may not hold a double quote"]
    return []


def check_assignment(assignment, nb, lang, root=None):
    """Drift lines between the English units of `nb` and the `lang` translation file."""
    path = _rel(translation_path(assignment, lang, root))
    units = english_units(assignment, nb)
    tr = load(assignment, lang, root)
    out = []
    stamp = f"python -m autograder.build.stamp {assignment}:"
    for (section, key), unit in units.items():
        entry = tr[section].get(key)
        where = f"{path}: {section}.{key} ({unit.label})"
        if entry is None:
            out.append(f"{where}: no {lang} translation (add one, then `{stamp}{section}.{key}`)")
        elif str(entry.get("en")) != digest(unit.english):
            out.append(
                f"{where}: the English changed and its {lang} translation did not (update the "
                f"translation, then `{stamp}{section}.{key}`)"
            )
        elif str(entry.get(lang)) != digest(entry["text"]):
            out.append(
                f"{where}: the {lang} text changed and its English did not (make the same change "
                f"in the English, then `{stamp}{section}.{key}`)"
            )
        else:
            out += [f"{where}: the {lang} text {p}" for p in validate(unit, entry["text"])]
    for section in SECTIONS:
        for key in tr[section]:
            if (section, key) not in units:
                out.append(f"{path}: {section}.{key}: translates English that is no longer there (remove it)")
    return out


def check(names, masters, lang="pt-BR"):
    """Drift lines of every translation file (and of texts.yml)."""
    out = texts.check()
    for name in names:
        out += check_assignment(name, masters[name], lang)
    return out


# -- the translated master notebook ------------------------------------------------------


def _text_of(tr, section, key, english):
    entry = tr[section].get(key)
    return entry["text"] if entry is not None else english


def _line_starts(src):
    starts, total = [], 0
    for line in src.split("\n"):
        starts.append(total)
        total += len(line) + 1
    return starts


def _offset(src, starts, lineno, col_bytes):
    line = src.split("\n")[lineno - 1]
    return starts[lineno - 1] + len(line.encode("utf-8")[:col_bytes].decode("utf-8", "ignore"))


def _apply(src, edits):
    for start, end, new in sorted(edits, reverse=True):
        src = src[:start] + new + src[end:]
    return src


def render_docstring(text, indent):
    lines = text.split("\n")
    if len(lines) == 1:
        return f'"""{text}"""'
    body = "\n".join(indent + line if line.strip() else "" for line in lines[1:])
    return f'"""{lines[0]}\n{body}\n{indent}"""'


def localize_python(src, docstrings, comments):
    """`src` with the docstrings of its functions and classes from `docstrings`
    ({qualname: text}) and the worded comments of its top-level functions from
    `comments` ({function: [text, ...]}, in order); what has no entry stays."""
    tree = ast.parse(src)
    starts = _line_starts(src)
    lines = src.split("\n")
    edits = []
    for qualname, node in _defs(tree):
        doc = _docstring_node(node)
        if doc is None or qualname not in docstrings:
            continue
        indent = re.match(r"\s*", lines[doc.lineno - 1]).group(0)
        edits.append(
            (
                _offset(src, starts, doc.lineno, doc.col_offset),
                _offset(src, starts, doc.end_lineno, doc.end_col_offset),
                render_docstring(docstrings[qualname], indent),
            )
        )
    seen = {}
    for owner, (row, col, end), _ in _comments(src):
        if owner not in comments:
            continue
        i = seen.get(owner, 0)
        seen[owner] = i + 1
        if i < len(comments[owner]):
            edits.append((starts[row - 1] + col, starts[row - 1] + end, "# " + comments[owner][i]))
    return _apply(src, edits)


def _docs_and_comments(assignment, lang, cache):
    if assignment not in cache:
        tr = load(assignment, lang)
        cache[assignment] = (
            {k: e["text"] for k, e in tr["docstrings"].items()},
            {k: e["text"] for k, e in tr["comments"].items()},
        )
    return cache[assignment]


def _localize_messages(src, tr):
    starts = _line_starts(src)
    edits = []
    for fn, msgs, nodes in test_messages(src):
        entry = tr["messages"].get(fn)
        if entry is None or not isinstance(entry["text"], dict) or set(entry["text"]) != set(msgs):
            continue
        for key, node in nodes.items():
            edits.append(
                (
                    _offset(src, starts, node.lineno, node.col_offset),
                    _offset(src, starts, node.end_lineno, node.end_col_offset),
                    json.dumps(entry["text"][key], ensure_ascii=False),
                )
            )
    return _apply(src, edits)


def localize(assignment, nb, lang):
    """The `lang` master notebook made from the English one `nb` (a copy; `nb` is not changed).
    Where a translation is missing the English stays (`check_assignment` reports it)."""
    import importlib

    out = copy.deepcopy(nb)
    if lang == SOURCE:
        return out
    tr = load(assignment, lang)
    cache = {}
    own_docs, _ = _docs_and_comments(assignment, lang, cache)
    module = importlib.import_module(f"autograder.private.solutions.{assignment}")
    owners = {n: getattr(module, n).__module__.rsplit(".", 1)[-1] for n in getattr(module, "PROVIDED", ())}
    in_tests = False
    for cell in out.cells:
        src, tags, cid = sync._src(cell), sync._tags(cell), cell.get("id")
        kind = cell.get("cell_type")
        if kind == "raw":
            head = src.strip().split("\n")[0].strip().upper()
            in_tests = {"# BEGIN TESTS": True, "# END TESTS": False}.get(head, in_tests)
            english = _config_instructions(src)
            if english:
                text = _text_of(tr, "strings", "export_instructions", english)
                lines = src.split("\n")
                found = [i for i, line in enumerate(lines) if line.strip().startswith("instructions:")]
                if len(found) != 1 or yaml.safe_load(lines[found[0]].strip())["instructions"] != english:
                    raise TranslationError(
                        f"{assignment}: write the export instructions on one line of the ASSIGNMENT CONFIG"
                    )
                indent = lines[found[0]][: len(lines[found[0]]) - len(lines[found[0]].lstrip())]
                lines[found[0]] = f"{indent}instructions: {json.dumps(text, ensure_ascii=False)}"
                cell["source"] = "\n".join(lines)
            continue
        if grading_text.tag_of(tags):
            cell["source"] = grading_text.render(grading_text.tag_of(tags), assignment, lang)
        elif time_text.tag_of(tags):
            cell["source"] = time_text.render(time_text.tag_of(tags), assignment, lang, nb)
        elif sync.IMPORTS_TAG in tags:
            cell["source"] = src.replace(texts.get("imports_header", SOURCE), texts.get("imports_header", lang), 1)
        elif sync.PROVIDED_TAG in tags:
            first, _, rest = src.partition("\n")
            names = ", ".join(owners)
            if first != texts.get("provided_header", SOURCE).format(names=names):
                raise TranslationError(f"{assignment}: the provided cell does not start with its header")
            docs, comments = {}, {}
            for owner in sorted(set(owners.values())):
                d, c = _docs_and_comments(owner, lang, cache)
                docs.update(
                    {k: v for k, v in d.items() if k.split(".")[0] in owners and owners[k.split(".")[0]] == owner}
                )
                comments.update({k: v for k, v in c.items() if k in owners and owners[k] == owner})
            cell["source"] = (
                texts.get("provided_header", lang).format(names=names) + "\n" + localize_python(rest, docs, comments)
            )
        elif sync.SOLUTION_TAG in tags:
            src = localize_python(src, own_docs, {})
            for line in re.findall(r'raise NotImplementedError\("(.*)"\)', src):
                m = re.fullmatch(_stub_pattern(SOURCE), line)
                if m:
                    src = src.replace(line, texts.get("stub", lang).format(**m.groupdict()))
            cell["source"] = src
        elif kind == "markdown" and src.strip() and cid is not None:
            cell["source"] = _text_of(tr, "cells", cid, src)
        elif kind == "code" and in_tests:
            cell["source"] = _localize_messages(src, tr)
        elif kind == "code" and cid is not None and cid in tr["cells"]:
            cell["source"] = tr["cells"][cid]["text"]
    return out


def _stub_pattern(lang):
    template = texts.get("stub", lang)
    parts = re.split(r"\{(\w+)\}", template)
    return "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>[\\w.]+)" for i, p in enumerate(parts))


# -- stamping ------------------------------------------------------------------------------


def _dump_text(value, indent):
    """`text:` as YAML (a literal block where it round-trips, else a quoted string)."""
    pad = " " * indent
    if isinstance(value, dict):
        return "text:\n" + "".join(f"{pad}  {k}: {json.dumps(v, ensure_ascii=False)}\n" for k, v in value.items())
    if isinstance(value, list):
        return "text:\n" + "".join(f"{pad}- {json.dumps(v, ensure_ascii=False)}\n" for v in value)
    if "\n" in value or len(value) > 80:
        chomp = "-" if not value.endswith("\n") else ("" if not value.endswith("\n\n") else "+")
        body = "".join(
            f"{pad}  {line}\n" if line else "\n" for line in value.split("\n")[: (-1 if value.endswith("\n") else None)]
        )
        block = f"text: |{chomp}\n{body}"
        try:
            if yaml.safe_load(block)["text"] == value:
                return block
        except yaml.YAMLError:
            pass
    return f"text: {json.dumps(value, ensure_ascii=False)}\n"


def _hash_yaml(value):
    return f'"{value}"' if value else "null"  # quoted: a hash of digits alone must stay a string


HEADER = """\
# The {lang} edition of {assignment}: every text a student reads, translated from
# the English master (assignments/{assignment}/{assignment}.ipynb and the docstrings of
# solutions/{assignment}.py). Each entry: `en`, a hash of the English it translates;
# `{lang}`, a hash of its text; `text`. Change both languages, then stamp the entry:
#   python -m autograder.build.stamp {assignment}:SECTION.KEY
# (see autograder/build/editions.py). `build --check` fails while a hash does not match.
"""


def dump(assignment, lang, tr, order):
    """The translation file's text: sections and keys in `order` (English order), then the rest."""
    out = [HEADER.format(lang=lang, assignment=assignment)]
    for section in SECTIONS:
        entries = tr.get(section) or {}
        if not entries:
            continue
        out.append(f"{section}:\n")
        keys = [k for s, k in order if s == section and k in entries] + [
            k for k in entries if (section, k) not in order
        ]
        for key in keys:
            e = entries[key]
            out.append(f"  {key}:\n    en: {_hash_yaml(e.get('en'))}\n    {lang}: {_hash_yaml(e.get(lang))}\n")
            out.append("    " + _dump_text(e["text"], 4))
    return "".join(out)


def stamp(keys=(), log=print):
    """Record the hashes of the named entries ("assignment[:section[.key]]" prefixes, or
    "texts[:key]"); with no keys, of every entry that has no hash yet. Returns the count."""
    from autograder import config as config_mod

    cfg = config_mod.load()
    count = 0
    text_keys = [k.partition(":")[2] for k in keys if k.split(":")[0] == "texts"]
    if not keys or text_keys:
        data = texts.load()
        wanted = [
            k for k in data if (not keys and data[k].get("pair") is None) or any(k == t or not t for t in text_keys)
        ]
        count += len(texts.stamp(wanted)) if wanted else 0
    masters = {d.assignment: d.nb for d in sync.sync({n: cfg.questions(n) for n in cfg.assignments}, check=True)}
    for name in cfg.assignments:
        units = english_units(name, masters[name])
        for lang in TRANSLATED:
            path = translation_path(name, lang)
            if not path.exists():
                continue
            tr = load(name, lang)
            changed = 0
            for section in SECTIONS:
                for key, entry in tr[section].items():
                    full = f"{name}:{section}.{key}"
                    named = any(full == k or full.startswith(k + (".") if ":" in k else k + ":") for k in keys)
                    if keys and not named:
                        continue
                    if not keys and entry.get("en") and entry.get(lang):
                        continue
                    unit = units.get((section, key))
                    if unit is None:
                        log(f"not stamped: {full} translates nothing in the English (remove it)")
                        continue
                    entry["en"], entry[lang] = digest(unit.english), digest(entry["text"])
                    changed += 1
            if changed:
                path.write_text(dump(name, lang, tr, list(units)), encoding="utf-8")
                log(f"stamped {changed} entr{'y' if changed == 1 else 'ies'} of {_rel(path)}")
            count += changed
    return count


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] != "stamp":
        print("usage: python -m autograder.build.stamp [ASSIGNMENT[:SECTION[.KEY]] | texts[:KEY] ...]", file=sys.stderr)
        return 2
    try:
        n = stamp(argv[1:])
    except (TranslationError, sync.SyncError) as exc:
        print(f"stamp failed: {exc}", file=sys.stderr)
        return 2
    print(f"{n} entr{'y' if n == 1 else 'ies'} stamped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
