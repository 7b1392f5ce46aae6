"""Files written whole, then put in place (standard library only).

Everything the kit leaves for a person or a later run (results.json, the
feedback files, grades.csv, shard.json, the class report, the LMS exports, a
merged folder) is written beside its place under another name and renamed
over it, so a reader finds the old file or the new one, never half of one.
"""

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def replacing(path: str | os.PathLike[str], staging: str | None = None) -> Iterator[Path]:
    """The path to write into (beside `path`, named `staging` or `<name>.tmp`), renamed over
    `path` once the block ends without an exception (after one it is left as it is)."""
    path = Path(path)
    tmp = path.with_name(staging or path.name + ".tmp")
    yield tmp
    os.replace(tmp, path)


def write_text(path: str | os.PathLike[str], text: str, newline: str | None = None) -> None:
    """`path` holds `text` (UTF-8; `newline` as `open` takes it)."""
    with replacing(path) as tmp:
        tmp.write_text(text, encoding="utf-8", newline=newline)


def write_json(path: str | os.PathLike[str], data: Any, end: str = "") -> None:
    """`path` holds `data` as JSON, indented by 2, followed by `end`."""
    write_text(path, json.dumps(data, indent=2) + end)
