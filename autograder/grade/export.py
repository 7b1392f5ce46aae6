"""Who submitted what, from a Gradescope "Export Submissions" folder.

Gradescope's export is a folder of `submission_<n>/` folders (one per
submission, holding what the student uploaded) and `submission_metadata.yml`,
keyed by those folder names, with Ruby-style symbol keys:

    submission_123456:
      :submitters:
      - :name: Ada Lovelace
        :sid: '1815'
        :email: ada@example.edu
      :created_at: 2024-03-01 10:00:00.000000000 -03:00
      ...

A submission found under `submission_<n>/` of a folder given to `grade` (or a
file `submission_<n>.ipynb` there) gets that entry's submitters, as
[{name, email, sid}] (strings, one printable line each, "" where missing).

The file is the export's, not the kit's: it is read with PyYAML's safe loader
(no object is ever built from a tag: an unknown tag such as `!ruby/object` is
read as the plain mapping, list or text under it), at most
`limits.export_metadata_mb` of it, and anything wrong with it (unreadable,
too large, not YAML, not a mapping, an entry of the wrong shape) costs one
line on stderr and the names it could not give, never the batch.
"""

import os

import yaml

from autograder.grade.text import display
from autograder.messages import t

METADATA_NAME = "submission_metadata.yml"
PREFIX = "submission_"


class _Loader(yaml.SafeLoader):
    """The safe loader, reading an unknown tag as the plain value under it."""


def _untagged(loader, node):
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


_Loader.add_constructor(None, _untagged)  # the tags the safe loader does not know (SafeLoader: an error)


def _field(value):
    if value is None or isinstance(value, (dict, list)):
        return ""
    return display(str(value), 300)


def _get(entry, key):
    """entry[":key"] (Gradescope's symbol key), else entry["key"]."""
    return entry.get(f":{key}", entry.get(key)) if isinstance(entry, dict) else None


def _submitters(entry):
    """[{name, email, sid}] of one entry, or None if it is not of the export's shape."""
    people = _get(entry, "submitters")
    if not isinstance(people, list) or not all(isinstance(p, dict) for p in people):
        return None
    return [{f: _field(_get(p, f)) for f in ("name", "email", "sid")} for p in people]


def read(folder, max_bytes, say):
    """{submission folder name: [submitter]} from folder/submission_metadata.yml ({} if there is
    none). A problem with the file is told through `say` (one line) and costs only its names."""
    path = os.path.join(folder, METADATA_NAME)
    if not os.path.isfile(path):
        return {}
    where = display(path)
    try:
        with open(path, "rb") as f:
            raw = f.read(max_bytes + 1)
        if len(raw) > max_bytes:
            say(t("grade_export_too_large", where=where, mb=max_bytes // 2**20))
            return {}
        data = yaml.load(raw.decode("utf-8"), Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError, ValueError, TypeError) as exc:
        why = display(str(exc).splitlines()[0] if str(exc) else type(exc).__name__, 200)
        say(t("grade_export_not_metadata", where=where, why=why))
        return {}
    if data is None:
        return {}
    if not isinstance(data, dict):
        say(t("grade_export_not_metadata", where=where, why=t("grade_export_not_mapping")))
        return {}
    out, bad = {}, []
    for key, entry in data.items():
        if not (isinstance(key, str) and key.startswith(PREFIX)):
            continue  # not a submission's entry
        people = _submitters(entry)
        if people is None:
            bad.append(display(key, 60))
        else:
            out[key] = people
    if bad:
        more = t("grade_export_more", n=len(bad) - 1) if len(bad) > 1 else ""
        say(t("grade_export_no_submitters", where=where, entry=bad[0], more=more))
    return out


def submitters_of(found, max_bytes, say):
    """{Found: [submitter]} for each file under a `submission_<n>` of an export folder given.

    `found` items have `root` (the folder argument, None for a file given by name)
    and `rel` (their path under it); each folder's metadata is read once."""
    cache, out = {}, {}
    for f in found:
        if f.root is None:
            continue
        for depth in range(len(f.rel)):
            folder = os.path.join(f.root, *f.rel[:depth])
            key = f.rel[depth]
            if depth == len(f.rel) - 1:  # a file submission_<n>.ipynb beside the metadata
                key = os.path.splitext(key)[0]
            if not key.startswith(PREFIX):
                continue
            if folder not in cache:
                cache[folder] = read(folder, max_bytes, say)
            if key in cache[folder]:
                out[f] = cache[folder][key]
                break
    return out
