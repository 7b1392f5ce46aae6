"""`python -m autograder merge OUT... --out MERGED`: the outputs of `grade --shard` runs as one.

Each OUT is a folder `grade` wrote (usually one per shard, `grade --shard I/N`).
Every OUT/<id>/ folder (results.json, feedback.md, feedback.html) is copied
to MERGED/<id>/, and MERGED/grades.csv is written as a single run over all the
files would write it: the same rows, in the same order (each shard.json gives
its rows' places among all the files found), byte for byte.

It refuses, writing nothing (one line, exit status 2): an id in two OUTs with
different content (two shards that graded the same file differently, or two
different files), shard.json files of different splits (`of`), different
assignments or different numbers of files found, a results.json that cannot
be read. It warns (one line each, exit status 1 after writing what is there)
when the shard.json files say a shard is missing (1..N not all given) or a
shard lists a submission its folder lacks. A folder of MERGED is replaced by
the OUT's copy (re-running merge after regrading a shard updates it).
"""

import json
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from autograder import atomic
from autograder import config as config_mod
from autograder.grade import shard as shard_mod
from autograder.grade.grades_csv import CSV_NAME, write_csv
from autograder.grade.text import display
from autograder.messages import t

RESULTS = "results.json"


class Refused(Exception):
    """Why the merge writes nothing (one line)."""


def _say(message):
    print(message, file=sys.stderr, flush=True)


def _folders(out):
    """{id: path} of every OUT/<id>/ holding a results.json."""
    found = {}
    for name in sorted(os.listdir(out)):
        path = Path(out) / name
        if not name.startswith(".") and path.is_dir() and (path / RESULTS).is_file():
            found[name] = path
    return found


def _content(folder):
    """{relative path: bytes} of a result folder (files being written, *.tmp, left out)."""
    out = {}
    for path in sorted(Path(folder).rglob("*")):
        if path.is_file() and not path.name.endswith(".tmp"):
            out[path.relative_to(folder).as_posix()] = path.read_bytes()
    return out


def _results(folder):
    try:
        data = json.loads((Path(folder) / RESULTS).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise Refused(f"{display(Path(folder) / RESULTS)} cannot be read ({type(exc).__name__}); nothing merged")
    if not isinstance(data, dict):
        raise Refused(f"{display(Path(folder) / RESULTS)} is not a results.json; nothing merged")
    return data


def _check_shards(shards):
    """The split the shard.json files describe: (N or None, [warnings]); Refused where they disagree."""
    if not shards:
        return None, []
    for field, what in (("of", "splits"), ("assignment", "assignments"), ("found", "numbers of files found")):
        values = {s[field] for s in shards.values()}
        if len(values) > 1:
            listed = ", ".join(f"{display(o)}: {s[field]}" for o, s in shards.items())
            raise Refused(f"the shard.json files are of different {what} ({listed}); nothing merged")
    n = next(iter(shards.values()))["of"]
    present = {s["shard"] for s in shards.values()}
    missing = [i for i in range(1, n + 1) if i not in present]
    warnings = []
    if missing:
        warnings.append(
            f"merge: shard{'s' if len(missing) > 1 else ''} {', '.join(f'{i}/{n}' for i in missing)} "
            f"missing (no OUT given has its shard.json): grades.csv lacks their submissions"
        )
    return n, warnings


def plan(outs):
    """([(id, source folder)] in a single run's order, [warnings]); Refused when they cannot be merged."""
    shards, sources, order, warnings = {}, {}, {}, []
    for out in outs:
        try:
            info = shard_mod.read(out)
        except shard_mod.ShardError as exc:
            raise Refused(f"{exc}; nothing merged") from None
        folders = _folders(out)
        if info is not None:
            shards[out] = info
            for sid, pos in zip(info["ids"], info["positions"]):
                order.setdefault(sid, pos)
            lacking = [sid for sid in info["ids"] if sid not in folders]
            if lacking:
                warnings.append(
                    f"merge: {display(out)} (shard {info['shard']}/{info['of']}) lacks "
                    f"{len(lacking)} of its submissions ({', '.join(lacking[:3])}"
                    f"{', ...' if len(lacking) > 3 else ''}): was it interrupted?"
                )
        listed = set(info["ids"]) if info is not None else None
        for sid, folder in folders.items():
            if listed is not None and sid not in listed:
                continue  # a folder left by an earlier run into that OUT, not one of this shard's
            sources.setdefault(sid, []).append(folder)
    _, more = _check_shards(shards)
    warnings += more
    chosen = []
    for sid, folders in sources.items():
        first = _content(folders[0])
        for other in folders[1:]:
            if os.path.realpath(other) != os.path.realpath(folders[0]) and _content(other) != first:
                raise Refused(
                    f"{sid} is in {display(folders[0].parent)} and {display(other.parent)} with "
                    f"different content; nothing merged"
                )
        chosen.append((sid, folders[0]))
    # A single run's order: by place among the files found; folders no shard.json lists come after, by id.
    chosen.sort(key=lambda item: (item[0] not in order, order.get(item[0], 0), item[0]))
    return chosen, warnings


def _copy(src, dest):
    """dest becomes a copy of src (copied beside it, then put in place)."""
    if os.path.realpath(src) == os.path.realpath(dest):
        return
    with atomic.replacing(dest, f".{dest.name}.merging") as tmp:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(src, tmp, ignore=shutil.ignore_patterns("*.tmp"))
        if dest.exists():
            shutil.rmtree(dest)


def merge(outs, merged, cfg):
    """Merge; returns (rows merged, warnings). Raises Refused before writing anything."""
    merged = Path(merged)
    chosen, warnings = plan(outs)
    rows = []
    for sid, folder in chosen:
        data = _results(folder)
        sub = (data.get("extra_data") or {}).get("submission") or {}
        rows.append((sid, sub.get("found_as") or sub.get("path") or "", data))
    merged.mkdir(parents=True, exist_ok=True)
    for sid, folder in chosen:
        _copy(folder, merged / sid)
    write_csv(merged, rows, cfg)
    return rows, warnings


def main(*, outs: Sequence[str], out: str) -> int:
    """`merge`: join the --out folders `outs` of `grade --shard` runs into `out`, as a single run writes it."""
    try:
        cfg = config_mod.load()
    except config_mod.ConfigError as exc:
        _say(f"merge: {exc}")
        return 2
    for part in outs:
        if not os.path.isdir(part):
            _say(t("merge_not_grade_folder", path=display(part)))
            return 2
    merged = Path(out)
    if os.path.lexists(merged) and not merged.is_dir():
        _say(t("merge_out_not_folder", path=display(merged)))
        return 2
    if (merged / CSV_NAME).is_dir():
        _say(t("merge_csv_is_folder", path=display(merged / CSV_NAME)))
        return 2
    try:
        rows, warnings = merge(outs, merged, cfg)
    except Refused as exc:
        _say(f"merge: {exc}")
        return 2
    except OSError as exc:
        _say(t("merge_cannot_write", path=display(exc.filename or merged), reason=exc.strerror or exc))
        return 2
    for w in warnings:
        _say(w)
    print(t("merge_wrote", n=len(rows), folders=len(outs), out=display(merged), csv=display(merged / CSV_NAME)))
    from autograder import report

    print(report.pointer(merged))
    return 1 if warnings else 0
