"""Read a submission file in a limited helper process; never run it.

The judge never parses the student's file itself: `read_file(path, ...)`
starts a fresh interpreter (`python -I -S`, the standard library and six
modules of the kit: this one, `sourcecheck`, `by_hand`, `form`, `text` and
`protocol.forbidden`, loaded without the judge package's `__init__`) that limits itself
before it reads a byte
(`RLIMIT_AS` and `RLIMIT_DATA` of `limits.reader_memory_mb`, `RLIMIT_CPU` of
`limits.reader_seconds`), gets the file on its standard input, and answers
with plain JSON on its standard output. The judge waits for it with a
wall-clock timeout and turns any crash or limit into a one-line
`SubmissionError`.

What the helper does (`read_bytes`, a pure function the tests call directly):
- refuses a file over `limits.notebook_file_mb`; opens an otter export zip
  (any error of `zipfile`, `zlib` or a decompressor becomes a one-line reason)
  and takes its one notebook;
- decodes UTF-8 (undecodable bytes and lone surrogates become replacement
  characters), parses the JSON in a thread with a large stack and a high
  recursion limit (deep nesting parses, or fails as "nested too deeply");
- checks every type it uses (a list of cells, dict cells, metadata dicts,
  sources that are text or lists of text: anything else is ignored, cell by
  cell), drops outputs and keeps the code cells, with line ends normalised;
- refuses code over `limits.notebook_code_kb` (stored outputs do not count);
- per code cell: blanks IPython magics, removes otter's own statements, tells
  provided cells, and parses it once (what it defines at top level is sent
  back: `defined`); a cell that cannot be parsed (a syntax
  error, nesting or size past the parser's or the memory limit) is marked
  `unparsed` and nothing else is lost;
- runs the trusted source checks (`sourcecheck.findings`) on the parsed cells;
- reads the by-hand answer cell's literal numbers (`by_hand.read`: parsed, never
  run; `by_hand` in the answer, None when the notebook has no such cell), and
  the other typed-answer cells (the word forms the assignments declare, sent in the
  request as plain data: `by_hand.forms`) into `typed` ({question: answer}, only those
  present); a notebook
  with such a cell counts as defining its question (in `defined`), as a
  graded function's name does for detection;
- reads how the notebook is written, as the grader runs it (`form.findings`: a package
  the grader lacks, a name bound only by a later cell) into `form`;
- tells the assignment from otter's metadata or its init cell, and passes on
  otter's public tests (`metadata.otter.tests`), bounded.

Nothing it sends back is trusted beyond its shape: the judge checks every
type (`_submission_dict`).
"""

import ast
import io
import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
import zipfile
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import Any, TypeVar

from autograder.judge import by_hand, sourcecheck
from autograder.judge import form as written
from autograder.judge.form import LABEL_CHARS
from autograder.text import one_line

PROVIDED_MARK = "# PROVIDED:"
PROVIDED_TAG = "kit-provided"
MAX_ZIP_MEMBERS = 200
MAX_CODE_CELLS = 5000
RECURSION_LIMIT = 100_000  # in the helper's parsing thread (measured: 200 000 levels of JSON fit in its stack)
STACK_MB = 64
WALL_SLACK = 10  # seconds of wall clock past twice its CPU time before the helper is killed
MEMORY_EXIT = 3  # the helper's exit status when it ran out of memory outside a cell's parse
NAME_CHARS = 120
MAX_FORM = 20  # form findings sent back (`form.findings`): one per package, one per cell
T = TypeVar("T")


class SubmissionError(Exception):
    """The file cannot be graded at all. Raised with a key of the messages
    catalog (messages/reader.yml) and its fields, so that the helper process,
    which loads no catalog, sends plain data; `str()` says why in one line, in
    the language in force. A reason that is no key is shown as it is."""

    def __init__(self, key: str, **fields: object) -> None:
        super().__init__(key)
        self.key = key
        self.fields: dict[str, int | float | str] = {
            k: v if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v) for k, v in fields.items()
        }

    def __str__(self) -> str:
        from autograder.messages import catalog, t

        if self.key not in catalog():
            return str(self.key)
        # a field "@key" is itself a message (a word the helper cannot word, "the notebook")
        fields = {
            k: t(v[1:]) if isinstance(v, str) and v.startswith("@") and v[1:] in catalog() else v
            for k, v in self.fields.items()
        }
        return t(self.key, **fields)


# -- per-cell work (pure: text in, text out) -------------------------------------------
def clean(text: str) -> str:
    """Text as the worker may run it: valid UTF-8 (lone surrogates become '?'),
    every line end (\\r\\n, lone \\r) a \\n."""
    text = text.encode("utf-8", "replace").decode("utf-8")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def cell_text(cell: object) -> str:
    """A cell's source as one string: text, or a list whose text items are joined; else empty."""
    src = cell.get("source", "") if isinstance(cell, dict) else ""
    if isinstance(src, list):
        src = "".join(s for s in src if isinstance(s, str))
    return src if isinstance(src, str) else ""


def _meta(obj: object) -> dict[str, Any]:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    return meta if isinstance(meta, dict) else {}


def _tags(cell: object) -> list[str]:
    tags = _meta(cell).get("tags")
    return [t for t in tags if isinstance(t, str)] if isinstance(tags, list) else []


def is_provided(cell: object) -> bool:
    return PROVIDED_TAG in _tags(cell) or cell_text(cell).lstrip().startswith(PROVIDED_MARK)


_MAGIC = re.compile(r"^(\s*)[%!]")


def strip_magics(src: str) -> str:
    """Blank IPython magics and shell escapes, keeping line numbers and indentation."""
    out = []
    for line in src.split("\n"):
        m = _MAGIC.match(line)
        out.append(f"{m.group(1)}pass" if m else line)
    return "\n".join(out)


def _is_otter_statement(node: ast.stmt) -> bool:
    if isinstance(node, ast.Try):
        # The kit's init cell: `try: import otter; grader = otter.Notebook(...)` with a
        # stand-in for where otter cannot run the checks. Stripped whole, handlers included.
        return any(_is_otter_statement(n) for n in node.body)
    if isinstance(node, ast.Import):
        return any(a.name.split(".")[0] == "otter" for a in node.names)
    if isinstance(node, ast.ImportFrom):
        return (node.module or "").split(".")[0] == "otter"
    value = getattr(node, "value", None)
    if isinstance(node, ast.Assign) and isinstance(value, ast.Call):
        f = value.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        return name == "Notebook"
    if isinstance(node, ast.Expr) and isinstance(value, ast.Call):
        f = value.func
        return isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "grader"
    return False


def _strip_otter_tree(src: str, tree: ast.Module) -> str:
    """`src` with otter's top-level statements kept as `pass` lines, and `tree`
    without them (the tree of what is left)."""
    lines = src.split("\n")
    body = []
    for node in tree.body:
        if _is_otter_statement(node) and 0 < node.lineno <= (node.end_lineno or node.lineno) <= len(lines):
            lines[node.lineno - 1] = "pass"
            for i in range(node.lineno, node.end_lineno or node.lineno):
                lines[i] = ""
        else:
            body.append(node)
    tree.body = body
    return "\n".join(lines)


def strip_otter(src: str) -> str:
    """Remove otter's own top-level statements (kept as `pass` lines): imports of otter,
    `grader = ....Notebook(...)`, `grader.<anything>(...)`, and a `try` whose body holds
    one of these (the kit's init cell with its stand-in), handlers and all."""
    src = clean(src)
    tree, _ = sourcecheck.parse(src)
    return src if tree is None else _strip_otter_tree(src, tree)


_INIT = re.compile(r"otter\.Notebook\(\s*[\"']([\w.-]+?)(?:\.ipynb)?[\"']")


def detect_assignment(nb: object, known: Collection[object]) -> str | None:
    """The assignment a notebook belongs to, from otter's metadata or its init cell."""
    meta = _meta(nb)
    otter_meta: Any = meta.get("otter") if isinstance(meta.get("otter"), dict) else {}  # JSON, checked
    for key in ("assignment_name", "kit_assignment", "kit_language"):
        for name in (otter_meta.get(key), meta.get(key)):
            if isinstance(name, str) and name in known:
                return name
    cells = nb.get("cells") if isinstance(nb, dict) else None
    for cell in cells if isinstance(cells, list) else []:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            m = _INIT.search(cell_text(cell))
            if m and m.group(1) in known:
                return m.group(1)
    return None


# -- the helper's work -------------------------------------------------------------------
_DEF = re.compile(r"^(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)", re.M)


def _defined(tree: ast.Module | None, source: str) -> list[str]:
    """Names a cell defines at top level (def, class, or a plain assignment); for a
    cell that does not parse, what its `def`/`class` lines name."""
    if tree is None:
        return _DEF.findall(source)
    found: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [t.id for t in targets if isinstance(t, ast.Name)]
    return found


class _Cell:
    __slots__ = ("index", "source")

    def __init__(self, index: int, source: str) -> None:
        self.index, self.source = index, source


def _limit(limits: object, key: str) -> float:
    value = limits.get(key) if isinstance(limits, dict) else None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"grading.yml limits lack a positive {key}")
    return value


def _is_zip(data: bytes) -> bool:
    return data[:2] == b"PK" or zipfile.is_zipfile(io.BytesIO(data))


def _notebook_member(info: zipfile.ZipInfo) -> bool:
    n = info.filename
    return n.endswith(".ipynb") and "/." not in "/" + n and "__MACOSX" not in n and ".ipynb_checkpoints" not in n


def _from_zip(data: bytes, name: str, max_bytes: int) -> tuple[str, bytes]:
    """(member name, its bytes): the one notebook in an export zip."""
    member = None
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_ZIP_MEMBERS:
                raise SubmissionError("zip_too_many_files", name=name, n=len(infos), limit=MAX_ZIP_MEMBERS)
            notebooks = [i for i in infos if _notebook_member(i)]
            if not notebooks:
                raise SubmissionError("zip_no_notebook", name=name)
            if len(notebooks) > 1:
                names = ", ".join(sorted(one_line(i.filename, 40) for i in notebooks)[:5])
                raise SubmissionError(
                    "zip_many_notebooks", name=name, n=len(notebooks), names=one_line(names, NAME_CHARS)
                )
            info = notebooks[0]
            member = one_line(info.filename, NAME_CHARS)
            if info.flag_bits & 0x1:
                raise SubmissionError("zip_encrypted", member=member, name=name)
            if info.file_size > max_bytes:
                raise SubmissionError(
                    "zip_member_too_big", member=member, name=name, size=info.file_size, mb=max_bytes >> 20
                )
            with zf.open(info) as f:
                out = f.read(max_bytes + 1)
            if len(out) > max_bytes:
                raise SubmissionError("zip_member_over_limit", member=member, name=name, mb=max_bytes >> 20)
            return member, out
    except SubmissionError:
        raise
    except NotImplementedError:
        raise SubmissionError("zip_compression", member=member or "@the_notebook", name=name) from None
    except RuntimeError as exc:
        if "encrypt" in str(exc) or "password" in str(exc):
            raise SubmissionError("zip_encrypted", member=member or "@a_file", name=name) from None
        raise SubmissionError("zip_damaged", name=name, why=one_line(exc, NAME_CHARS)) from None
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - zipfile, zlib, bz2, lzma, struct, EOF, OS errors: all one reason
        kind = (
            type(exc).__name__ if type(exc).__module__ == "builtins" else f"{type(exc).__module__}.{type(exc).__name__}"
        )
        raise SubmissionError("zip_damaged", name=name, why=f"{kind}: {one_line(exc, NAME_CHARS)}") from None


def _json(text: str, name: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise SubmissionError("json_too_deep", name=name) from None
    except ValueError as exc:
        raise SubmissionError("json_invalid", name=name, why=one_line(exc, NAME_CHARS)) from None


def _check_kernel(nb: dict[str, Any], name: str) -> None:
    meta = _meta(nb)
    spec: Any = meta.get("kernelspec") if isinstance(meta.get("kernelspec"), dict) else {}
    info: Any = meta.get("language_info") if isinstance(meta.get("language_info"), dict) else {}
    text = [
        v if isinstance(v, str) else ""
        for v in (spec.get("language"), info.get("name"), spec.get("display_name"), spec.get("name"))
    ]
    language = (text[0] or text[1] or "python").lower()
    if language != "python":
        kernel = one_line(text[2] or text[3] or language, NAME_CHARS)
        raise SubmissionError("wrong_kernel", name=name, kernel=kernel, language=one_line(language, 40))


def _public_tests(meta: dict[str, Any], budget: int) -> dict[str, str]:
    """otter's public tests, {name: source}, as long as they fit in `budget` characters."""
    otter_meta: Any = meta.get("otter") if isinstance(meta.get("otter"), dict) else {}  # JSON, checked
    tests: Any = otter_meta.get("tests") if isinstance(otter_meta.get("tests"), dict) else {}
    out: dict[str, str] = {}
    for key, spec in tests.items():
        source = (
            spec if isinstance(spec, str) else spec.get("src") or spec.get("source") if isinstance(spec, dict) else None
        )
        if not isinstance(source, str):
            continue
        budget -= len(key) + len(source)
        if budget < 0:
            break
        out[clean(key)] = clean(source)
    return out


def _small_metadata(meta: dict[str, Any], budget: int) -> dict[str, Any]:
    """The notebook metadata the kit reads: the assignment's name, otter's public tests."""
    small: dict[str, Any] = {}
    otter_meta: Any = meta.get("otter") if isinstance(meta.get("otter"), dict) else {}  # JSON, checked
    for key in ("assignment_name", "kit_assignment", "kit_language"):
        if isinstance(meta.get(key), str):
            small[key] = clean(meta[key][:200])
    otter_small: dict[str, Any] = {"tests": _public_tests(meta, budget)}
    if isinstance(otter_meta.get("assignment_name"), str):
        otter_small["assignment_name"] = clean(otter_meta["assignment_name"][:200])
    small["otter"] = otter_small
    return small


def read_bytes(
    data: bytes,
    name: str,
    limits: dict[str, Any],
    known: Collection[object] = (),
    keep_provided: bool = False,
    typed: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The submission in `data` (a notebook's or an export zip's bytes) as plain
    data, or SubmissionError with a one-line reason. `name` is the file's
    name (for messages); `limits` grading.yml's `limits`; `typed` the word forms
    ({question: plain data}, `by_hand.forms`) besides the by-hand cell."""
    name = one_line(name, NAME_CHARS)
    max_bytes = int(_limit(limits, "notebook_file_mb") * (1 << 20))
    max_code = int(_limit(limits, "notebook_code_kb") * (1 << 10))
    if len(data) > max_bytes:
        raise SubmissionError("file_too_big", name=name, size=len(data), mb=max_bytes >> 20)
    where = name
    if _is_zip(data):
        member, data = _from_zip(data, name, max_bytes)
        where = f"{member} in {name}"
    text = data.decode("utf-8", "replace")
    del data
    if text.startswith("\ufeff"):
        text = text[1:]
    nb = _json(text, where)
    del text
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        if isinstance(nb, dict) and "worksheets" in nb:
            raise SubmissionError("nbformat3", name=where)
        raise SubmissionError("no_cells", name=where)
    _check_kernel(nb, where)

    # The code cells, outputs dropped; indices are positions among all cells, from 1.
    code, size = [], 0
    # each code cell as the student sees it (`form.shown_label`)
    labels: dict[int, str] = {}
    # the typed-answer cells of each form: (index, label, text), the first by_hand.MAX_LISTED, and their count
    forms = by_hand.forms(typed)
    marked: dict[str, list[tuple[int, str, str]]] = {f.question: [] for f in forms}
    n_marked = {f.question: 0 for f in forms}
    for i, cell in enumerate(nb["cells"], start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        original = clean(cell_text(cell))
        labels[i] = written.shown_label(cell.get("execution_count"), original)
        size += len(original.encode("utf-8"))
        if size > max_code:
            raise SubmissionError("too_much_code", name=where, kb=max_code >> 10)
        code.append((i, original, is_provided(cell)))
        for form in forms if not code[-1][2] else ():
            if by_hand.is_marked(original, _tags(cell), form):
                n_marked[form.question] += 1
                if len(marked[form.question]) < by_hand.MAX_LISTED:
                    marked[form.question].append((i, labels[i], original))
        if len(code) > MAX_CODE_CELLS:
            raise SubmissionError("too_many_cells", name=where, n=MAX_CODE_CELLS)
    meta = _meta(nb)
    small_meta = _small_metadata(meta, max_code)
    assignment = detect_assignment(
        {"metadata": meta, "cells": [{"cell_type": "code", "source": o} for _, o, _ in code]},
        [k for k in known if isinstance(k, str)],
    )
    del nb, meta

    cells: list[dict[str, Any]] = []
    provided_names: list[str] = []
    defined: set[str] = set()

    # one cell's tree at a time: the checks keep only its definitions
    def parsed() -> Iterator[tuple[_Cell, ast.Module | None, str | None]]:
        for index, original, provided in code:
            source = strip_magics(original)
            tree, why = sourcecheck.parse(source)
            if tree is not None:
                source = _strip_otter_tree(source, tree)
            if provided:
                if tree is not None:
                    provided_names.extend(
                        n.name
                        for n in tree.body
                        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                    )
                if not keep_provided:
                    continue
            cells.append(
                {"index": index, "source": source, "original": original, "unparsed": why, "label": labels.get(index)}
            )
            defined.update(_defined(tree, source))
            yield _Cell(index, source), tree, why
            del tree

    findings = sourcecheck.findings(parsed())
    as_written = written.findings([(i, labels[i], original) for i, original, provided in code if not provided])
    answer = by_hand.read(marked[by_hand.QUESTION], n_marked[by_hand.QUESTION])
    words = {
        f.question: by_hand.read(marked[f.question], n_marked[f.question], f) for f in forms[1:] if marked[f.question]
    }
    del marked
    if answer is not None:  # the notebook answers the by-hand question: detection counts it as defined
        defined.add(by_hand.QUESTION)
    defined.update(words)
    return {
        "notebook": {
            "metadata": small_meta,
            "cells": [{"cell_type": "code", "source": o, "metadata": {}} for _, o, _ in code],
        },
        "cells": cells,
        "assignment": assignment,
        "provided": sorted(set(provided_names)),
        "defined": sorted(defined),
        "findings": findings,
        "by_hand": answer,
        "typed": words,
        "form": as_written[:MAX_FORM],
    }


def _in_big_stack(fn: Callable[[], T], memory_bytes: int) -> tuple[T | None, BaseException | None]:
    """fn() in a thread with a large stack (at most a quarter of the memory
    limit) and a recursion limit to match; (result, exception)."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["result"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            out["error"] = exc

    stack = max(1 << 20, min(STACK_MB << 20, memory_bytes // 4))
    threading.stack_size(stack)
    sys.setrecursionlimit(max(1000, RECURSION_LIMIT * stack // (STACK_MB << 20)))
    t = threading.Thread(target=run)
    try:
        t.start()
    except RuntimeError:  # no room for its stack
        return None, MemoryError()
    t.join()
    return out.get("result"), out.get("error")


def _limit_self(limits: dict[str, Any]) -> None:
    import resource

    memory = int(_limit(limits, "reader_memory_mb") * (1 << 20))
    seconds = int(max(1, _limit(limits, "reader_seconds")))
    for which in (resource.RLIMIT_AS, resource.RLIMIT_DATA):
        resource.setrlimit(which, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 2))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))


def child_main(request_json: str) -> int:
    """The helper: the request in argv, the file on stdin, the answer on stdout."""
    out = sys.stdout.buffer
    try:
        request = json.loads(request_json)
        limits = request["limits"]
        _limit_self(limits)
        max_bytes = int(_limit(limits, "notebook_file_mb") * (1 << 20))

        def read() -> dict[str, Any]:  # the file's bytes live only in read_bytes, which lets go of them once decoded
            return read_bytes(
                sys.stdin.buffer.read(max_bytes + 1),
                request["name"],
                limits,
                request["known"],
                bool(request["keep_provided"]),
                request["typed"],
            )

        result, error = _in_big_stack(read, int(_limit(limits, "reader_memory_mb") * (1 << 20)))
        if isinstance(error, SubmissionError):  # plain data: the judge words it in the submission's language
            answer = {"ok": False, "reason": {"key": error.key, "fields": error.fields}}
        elif isinstance(error, MemoryError):
            return MEMORY_EXIT
        elif error is not None:
            answer = {"ok": False, "internal": f"{type(error).__name__}: {one_line(error, 300)}"}
        else:
            answer = {"ok": True, "result": result}
        del result
        out.write(json.dumps(answer, ensure_ascii=False).encode("utf-8"))
        out.flush()
        return 0
    except MemoryError:
        return MEMORY_EXIT


# The helper's entry: the kit's modules it needs, loaded without the packages'
# `__init__` (the judge's imports pytest and torch); the package folder is argv[1].
_BOOT = (
    "import sys, types\n"
    "pkg = sys.argv[1]\n"
    "for name, path in (('autograder', pkg), ('autograder.judge', pkg + '/judge')):\n"
    "    m = types.ModuleType(name); m.__path__ = [path]; sys.modules[name] = m\n"
    "from autograder.judge import reader\n"
    "sys.exit(reader.child_main(sys.argv[2]))\n"
)
PACKAGE_DIR = Path(__file__).resolve().parents[1]


# -- the judge's side ------------------------------------------------------------------
def _reader_limits(limits: object) -> dict[str, float]:
    keys = ("notebook_file_mb", "notebook_code_kb", "reader_memory_mb", "reader_seconds")
    return {k: _limit(limits, k) for k in keys}


def _declared(typed: dict[str, dict[str, Any]] | None) -> dict[str, dict[str, Any]]:
    """`typed`, or (None) the word forms the assignments declare."""
    if typed is not None:
        return typed
    from autograder import declarations  # here: the helper loads this module without it

    return declarations.typed_forms()


def read_file(
    path: str | Path,
    known: Collection[object] = (),
    keep_provided: bool = False,
    limits: dict[str, Any] | None = None,
    typed: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The submission at `path` as `read_bytes` gives it (checked for shape),
    read by the limited helper; SubmissionError with a one-line reason. `typed`:
    the word forms besides the by-hand cell, as plain data (None: those the assignments
    declare, `declarations.typed_forms`)."""
    typed = _declared(typed)
    path = Path(path)
    name = one_line(path.name, NAME_CHARS)
    limits = _reader_limits(limits)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise SubmissionError("cannot_read", name=name, why=exc.strerror) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise SubmissionError("not_regular", name=name)
    with os.fdopen(fd, "rb") as f:
        max_bytes = int(limits["notebook_file_mb"] * (1 << 20))
        if st.st_size > max_bytes:
            raise SubmissionError("file_too_big", name=name, size=st.st_size, mb=max_bytes >> 20)
        os.set_blocking(fd, True)
        request = json.dumps(
            {
                "name": path.name,
                "known": [k for k in known if isinstance(k, str)],
                "keep_provided": bool(keep_provided),
                "limits": limits,
                "typed": typed,
            }
        )
        wall = limits["reader_seconds"] * 2 + WALL_SLACK
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-B", "-X", "utf8", "-c", _BOOT, str(PACKAGE_DIR), request],
            stdin=f,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            close_fds=True,
            start_new_session=True,
            env={"MALLOC_ARENA_MAX": "2", "PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            cwd="/",
        )
    try:
        stdout, stderr = proc.communicate(timeout=wall)
    except subprocess.TimeoutExpired:
        _kill(proc)
        proc.communicate()
        raise SubmissionError("reader_wall", name=name, seconds=f"{wall:g}") from None
    except BaseException:
        _kill(proc)
        raise
    rc = proc.returncode
    if rc == MEMORY_EXIT or rc == -signal.SIGABRT or (rc == 1 and b"MemoryError" in stderr[-2000:]):
        raise SubmissionError("reader_memory", name=name, mb=f"{limits['reader_memory_mb']:g}")
    if rc == -signal.SIGXCPU:
        raise SubmissionError("reader_cpu", name=name, seconds=f"{limits['reader_seconds']:g}")
    if rc == -signal.SIGKILL:
        raise SubmissionError(
            "reader_limits", name=name, mb=f"{limits['reader_memory_mb']:g}", seconds=f"{limits['reader_seconds']:g}"
        )
    if rc != 0:
        what = f"signal {-rc}" if rc < 0 else f"exit status {rc}"
        raise SubmissionError("reader_stopped", name=name, what=what)
    try:
        answer = json.loads(stdout.decode("utf-8"))
    except (ValueError, RecursionError):
        raise SubmissionError("reader_no_answer", name=name) from None
    if not isinstance(answer, dict):
        raise SubmissionError("reader_wrong_shape", name=name, what="an answer")
    if answer.get("ok") is True:
        return _submission_dict(answer.get("result"), name, known, typed)
    reason = answer.get("reason")
    if isinstance(reason, dict) and isinstance(reason.get("key"), str) and isinstance(reason.get("fields"), dict):
        from autograder.messages import catalog

        fields = reason["fields"]
        if reason["key"] in catalog() and all(
            isinstance(k, str) and isinstance(v, (str, int, float)) for k, v in fields.items()
        ):
            raise SubmissionError(
                reason["key"], **{k: one_line(v, 300) if isinstance(v, str) else v for k, v in fields.items()}
            )
        raise SubmissionError("reader_wrong_shape", name=name, what="a reason")
    raise SubmissionError("reader_failed", name=name, why=one_line(answer.get("internal", "no reason given"), 200))


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass


def _strs(x: object) -> bool:
    return isinstance(x, list) and all(isinstance(s, str) for s in x)


def _form_findings(found: object) -> bool:
    """Whether `found` has the shape `form.findings` gives (at most MAX_FORM of them)."""
    return (
        isinstance(found, list)
        and len(found) <= MAX_FORM
        and all(
            isinstance(f, dict)
            and f.get("key") in written.KEYS
            and isinstance(f.get("fields"), dict)
            and all(isinstance(k, str) and (type(v) is int or isinstance(v, str)) for k, v in f["fields"].items())
            and type(f.get("cell")) is int
            and _strs(f.get("names"))
            for f in found
        )
    )


def _submission_dict(
    result: Any, name: str, known: Collection[object] = (), typed: dict[str, dict[str, Any]] | None = None
) -> dict[str, Any]:
    """`result` if it has the shape `read_bytes` gives, else SubmissionError (`typed` as
    `read_file` takes it)."""
    typed = _declared(typed)

    def bad(what: str) -> SubmissionError:
        return SubmissionError("reader_wrong_shape", name=name, what=what)

    if not isinstance(result, dict):
        raise bad("an answer")
    cells = result.get("cells")
    if not isinstance(cells, list) or not all(
        isinstance(c, dict)
        and type(c.get("index")) is int
        and isinstance(c.get("source"), str)
        and isinstance(c.get("original"), str)
        and (c.get("unparsed") is None or isinstance(c["unparsed"], str))
        and (c.get("label") is None or (isinstance(c["label"], str) and len(c["label"]) <= LABEL_CHARS))
        for c in cells
    ):
        raise bad("cells")
    if result.get("assignment") is not None and result["assignment"] not in [k for k in known if isinstance(k, str)]:
        raise bad("an assignment")
    if not _strs(result.get("provided")) or not _strs(result.get("defined")):
        raise bad("names")
    f = result.get("findings")
    if not (
        isinstance(f, dict)
        and isinstance(f.get("forbidden"), dict)
        and all(isinstance(k, str) and _strs(v) for k, v in f["forbidden"].items())
        and isinstance(f.get("excused"), dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in f["excused"].items())
        and _strs(f.get("tracing"))
        and _strs(f.get("unchecked"))
    ):
        raise bad("findings")
    nb: Any = result.get("notebook")  # checked for shape below
    meta = nb.get("metadata") if isinstance(nb, dict) else None
    otter_meta = meta.get("otter") if isinstance(meta, dict) else None
    if not (
        isinstance(meta, dict)
        and isinstance(otter_meta, dict)
        and isinstance(otter_meta.get("tests"), dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in otter_meta["tests"].items())
        and all(isinstance(meta.get(k, ""), str) for k in ("assignment_name", "kit_assignment", "kit_language"))
        and isinstance(otter_meta.get("assignment_name", ""), str)
        and isinstance(nb.get("cells"), list)
        and all(
            isinstance(c, dict) and c.get("cell_type") == "code" and isinstance(c.get("source"), str)
            for c in nb["cells"]
        )
    ):
        raise bad("a notebook")
    if not _form_findings(result.get("form")):
        raise bad("form findings")
    try:
        result["by_hand"] = by_hand.checked(result.get("by_hand"), MAX_CODE_CELLS)
        result["typed"] = by_hand.checked_typed(result.get("typed"), MAX_CODE_CELLS, typed)
    except ValueError:
        raise bad("a by-hand answer") from None
    return result


if __name__ == "__main__":  # python -m autograder.judge.reader REQUEST_JSON < FILE
    sys.exit(child_main(sys.argv[1]))
