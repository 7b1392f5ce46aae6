"""The public part of the kit, as a wheel for student repositories.

`attention-autograder-kit-public`: the worker, the protocol, the sandbox, the
notebook reader and `check` (the notebook's public tests, run in the sandboxed
worker, with a job summary), and nothing of the private root: no solutions,
no hidden suites, no catalog, no hostile battery, no build or audit code.
Students' CI installs this (the GitHub workflow template does); grades that
count come from Gradescope or a staff-run `grade`.

The wheel is written directly (a zip with its dist-info), so `build` needs no
build backend for it; the same bytes every time for the same sources.
"""

import base64
import hashlib
import zipfile
from pathlib import Path

from autograder import __version__, declarations, layout
from autograder.build import package

NAME = "attention-autograder-kit-public"
DIST = "attention_autograder_kit_public"
# What of the package students get: everything but these.
SKIP = ("private", "audit", "demo", "build")
REQUIRES = ("torch>=2.4", "numpy", "pyyaml", "pytest", "matplotlib")


def public_files():
    """{path inside the wheel: bytes} of the package's public part."""
    files = {}
    for path in sorted(layout.PACKAGE.rglob("*")):
        rel = path.relative_to(layout.PACKAGE)
        if not path.is_file() or rel.parts[0] in SKIP or "__pycache__" in rel.parts or path.suffix in (".pyc", ".pyo"):
            continue
        files[f"autograder/{rel.as_posix()}"] = path.read_bytes()
    # the typed forms the assignments declare, for `check` to read typed cells as the grade does
    files[f"autograder/{layout.PUBLIC_TYPED}"] = declarations.public_typed()
    return files


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_public_wheel(dest_dir):
    """Write the public wheel into `dest_dir`; returns its path."""
    files = public_files()
    info = f"{DIST}-{__version__}.dist-info"
    metadata = "\n".join(
        [
            "Metadata-Version: 2.1",
            f"Name: {NAME}",
            f"Version: {__version__}",
            "Summary: The public part of the attention autograder kit: public checks in a sandboxed worker",
            "Requires-Python: >=3.10",
            *[f"Requires-Dist: {r}" for r in REQUIRES],
            "",
        ]
    )
    files[f"{info}/METADATA"] = metadata.encode()
    files[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: attention-autograder-kit\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    files[f"{info}/entry_points.txt"] = b"[console_scripts]\nattention-kit = autograder.cli:main\n"
    record = [_record_line(n, d) for n, d in sorted(files.items())] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    dest = Path(dest_dir) / f"{DIST}-{__version__}-py3-none-any.whl"
    dest.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(dest, "w") as zf:
        for name in sorted(files):
            zf.writestr(package.member_info(name, 0o644), files[name], compress_type=zipfile.ZIP_DEFLATED)
    return dest
