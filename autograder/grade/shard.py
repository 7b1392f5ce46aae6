"""`grade --shard I/N`: one of N fixed parts of a batch, for grading a class on many machines.

Which part a file is in depends on that file alone: a hash (sha256) of its
path relative to the folder it was found under (a file given by name: its own
name), the same path its id is made from, modulo N. So every file is in
exactly one shard, the split does not depend on the order files are listed in,
and a file arriving or leaving never moves another one. Ids are still made
over every file found (a shard's ids are the single run's), then filtered.

Each shard writes OUT/shard.json, what `merge` checks:

    {"shard": I, "of": N, "assignment": "...", "found": <files found in all shards>,
     "ids": [...], "positions": [...]}

`ids` are the shard's submissions and `positions` their places among all the
files found, so `merge` puts the rows in a single run's order.
"""

import hashlib
import json
import os
import re

from autograder import atomic

SHARD_NAME = "shard.json"
_SPEC = re.compile(r"\s*(\d{1,6})\s*/\s*(\d{1,6})\s*")


class ShardError(ValueError):
    pass


def parse(text):
    """(I, N) from "I/N" with 1 <= I <= N, or ShardError (one line)."""
    m = _SPEC.fullmatch(str(text))
    if not m:
        raise ShardError(f"--shard takes I/N, e.g. 2/8 (got {str(text)[:40]!r})")
    i, n = int(m.group(1)), int(m.group(2))
    if not 1 <= i <= n:
        raise ShardError(f"--shard {i}/{n}: I must be between 1 and N")
    return i, n


def key(rel):
    """The bytes a file's shard is decided by: its path under the folder argument."""
    return os.fsencode("/".join(rel))


def number(rel, n):
    """The shard (1..n) of a file with this relative path."""
    return int.from_bytes(hashlib.sha256(key(rel)).digest()[:8], "big") % n + 1


def write(out, shard, assignment, found, ids, positions):
    data = {
        "shard": shard[0],
        "of": shard[1],
        "assignment": assignment,
        "found": found,
        "ids": list(ids),
        "positions": list(positions),
    }
    atomic.write_json(os.path.join(out, SHARD_NAME), data, end="\n")


def read(out):
    """OUT/shard.json checked, None if there is none, or ShardError (one line)."""
    path = os.path.join(out, SHARD_NAME)
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        i, n = int(data["shard"]), int(data["of"])
        ids, positions = list(data["ids"]), [int(p) for p in data["positions"]]
        found = int(data["found"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ShardError(f"{path}: not a shard.json written by grade --shard ({type(exc).__name__})") from None
    if not (1 <= i <= n and len(ids) == len(positions) and all(isinstance(s, str) for s in ids)):
        raise ShardError(f"{path}: not a shard.json written by grade --shard (inconsistent fields)")
    return {**data, "shard": i, "of": n, "ids": ids, "positions": positions, "found": found}
