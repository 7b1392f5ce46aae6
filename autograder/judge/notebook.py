"""Read a submission (a notebook or an otter export zip) into code cells the worker runs.

This runs in the trusted judge: it reads files and parses JSON, never runs the
student's code. It never unpickles anything (otter's `.OTTER_LOG` inside an
export zip is ignored).

What the worker gets: the notebook's code cells in order, with IPython magics
and shell lines blanked, otter's own statements (`import otter`,
`grader = otter.Notebook(...)`, `grader.check(...)`, `grader.export(...)`)
removed, and provided cells dropped; the reference copies of provided
functions are run before and after the cells instead (see `worker.load`).
"""
import ast
import json
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

PROVIDED_MARK = "# PROVIDED:"
PROVIDED_TAG = "kit-provided"
MAX_NOTEBOOK_BYTES = 20 << 20
MAX_ZIP_MEMBERS = 200


class SubmissionError(Exception):
    """The file cannot be graded at all; the message says why in one line."""


@dataclass
class Cell:
    index: int  # position among the notebook's cells, from 1 as Jupyter shows them
    source: str  # what the worker runs
    original: str  # what the student wrote


@dataclass
class Submission:
    path: Path
    notebook: dict
    cells: list = field(default_factory=list)
    assignment: str | None = None

    @property
    def source(self):
        """All graded code, for the trusted source checks."""
        return "\n\n".join(c.source for c in self.cells)


def read_notebook_json(path):
    """The notebook dict from a .ipynb file or an otter export zip."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise SubmissionError(f"cannot read {path.name}: {exc.strerror}") from None
    if zipfile.is_zipfile(path):
        return _from_zip(path)
    if size > MAX_NOTEBOOK_BYTES:
        raise SubmissionError(f"{path.name} is {size} bytes, over the {MAX_NOTEBOOK_BYTES}-byte limit for a notebook")
    return _parse(path.read_bytes(), path.name)


def _from_zip(path):
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_ZIP_MEMBERS:
                raise SubmissionError(f"{path.name} holds {len(infos)} files, over the limit of {MAX_ZIP_MEMBERS}")
            notebooks = [
                i for i in infos
                if i.filename.endswith(".ipynb") and "/." not in "/" + i.filename and "__MACOSX" not in i.filename
                and ".ipynb_checkpoints" not in i.filename
            ]
            if not notebooks:
                raise SubmissionError(f"{path.name} is a zip with no notebook (.ipynb) in it")
            if len(notebooks) > 1:
                names = ", ".join(sorted(i.filename for i in notebooks))
                raise SubmissionError(f"{path.name} holds {len(notebooks)} notebooks ({names}); submit exactly one")
            info = notebooks[0]
            if info.file_size > MAX_NOTEBOOK_BYTES:
                raise SubmissionError(f"{info.filename} in {path.name} is {info.file_size} bytes, over the limit")
            with zf.open(info) as f:
                data = f.read(MAX_NOTEBOOK_BYTES + 1)
            if len(data) > MAX_NOTEBOOK_BYTES:
                raise SubmissionError(f"{info.filename} in {path.name} is over the size limit")
            return _parse(data, info.filename)
    except zipfile.BadZipFile as exc:
        raise SubmissionError(f"{path.name} is a damaged zip file ({exc})") from None


def _parse(data, name):
    try:
        nb = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise SubmissionError(f"{name} is not a notebook (not UTF-8 text)") from None
    except ValueError as exc:
        raise SubmissionError(f"{name} is not a notebook (invalid JSON: {exc})") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        if isinstance(nb, dict) and "worksheets" in nb:
            raise SubmissionError(f"{name} is an nbformat 3 notebook; open and save it in Jupyter to convert it to nbformat 4")
        raise SubmissionError(f"{name} is not a notebook (no list of cells)")
    meta = nb.get("metadata") if isinstance(nb.get("metadata"), dict) else {}
    spec = meta.get("kernelspec") if isinstance(meta.get("kernelspec"), dict) else {}
    info = meta.get("language_info") if isinstance(meta.get("language_info"), dict) else {}
    language = str(spec.get("language") or info.get("name") or "python").lower()
    if language != "python":
        kernel = spec.get("display_name") or spec.get("name") or language
        raise SubmissionError(f"{name} was saved with the {kernel} kernel ({language}); the assignment is Python: "
                              "open it with a Python 3 kernel, run it and save it again")
    return nb


def cell_text(cell):
    src = cell.get("source", "")
    if isinstance(src, list):
        src = "".join(s for s in src if isinstance(s, str))
    return src if isinstance(src, str) else ""


def is_provided(cell):
    tags = (cell.get("metadata") or {}).get("tags") or []
    return PROVIDED_TAG in tags or cell_text(cell).lstrip().startswith(PROVIDED_MARK)


_MAGIC = re.compile(r"^(\s*)[%!]")


def strip_magics(src):
    """Blank IPython magics and shell escapes, keeping line numbers and indentation."""
    out = []
    for line in src.split("\n"):
        m = _MAGIC.match(line)
        out.append(f"{m.group(1)}pass" if m else line)
    return "\n".join(out)


def _is_otter_statement(node):
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


def strip_otter(src):
    """Remove otter's own top-level statements (kept as `pass` lines)."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return src  # the worker reports the syntax error for this cell
    lines = src.split("\n")
    for node in tree.body:
        if _is_otter_statement(node):
            lines[node.lineno - 1] = "pass"
            for i in range(node.lineno, node.end_lineno):
                lines[i] = ""
    return "\n".join(lines)


def detect_assignment(nb, known):
    """The assignment a notebook belongs to, from otter's metadata or its init cell."""
    meta = nb.get("metadata") or {}
    otter_meta = meta.get("otter") if isinstance(meta.get("otter"), dict) else {}
    for key in ("assignment_name", "kit_assignment"):
        name = otter_meta.get(key) or meta.get(key)
        if name in known:
            return name
    for cell in nb["cells"]:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            m = re.search(r"otter\.Notebook\(\s*[\"']([\w.-]+?)(?:\.ipynb)?[\"']", cell_text(cell))
            if m and m.group(1) in known:
                return m.group(1)
    return None


def load_submission(path, known_assignments, keep_provided=False):
    """The submission's cells as the worker runs them (provided cells dropped unless kept)."""
    nb = read_notebook_json(path)
    sub = Submission(Path(path), nb)
    sub.assignment = detect_assignment(nb, known_assignments)
    for i, cell in enumerate(nb["cells"], start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        original = cell_text(cell)
        if is_provided(cell) and not keep_provided:
            continue
        sub.cells.append(Cell(i, strip_otter(strip_magics(original)), original))
    return sub
