"""The build's own student-facing texts in every edition (`texts.yml`, beside this file).

`get(key, lang)` -> the text; `check()` -> drift lines (a language changed
without the other: each entry's `pair` hash no longer matches). Both languages
of an entry take the same fields ({names}, {task}, ...)."""

import hashlib
import string
from functools import lru_cache
from pathlib import Path

import yaml

PATH = Path(__file__).resolve().parent / "texts.yml"
LANGUAGES = ("en", "pt-BR")


def pair_digest(entry):
    joined = "\x00".join(entry[lang] for lang in LANGUAGES)
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()[:12]


@lru_cache(maxsize=1)
def load():
    data = yaml.safe_load(PATH.read_text(encoding="utf-8")) or {}
    for key, entry in data.items():
        if not isinstance(entry, dict) or not all(isinstance(entry.get(lang), str) for lang in LANGUAGES):
            raise ValueError(f"{PATH.name}: {key} needs a text for each of {', '.join(LANGUAGES)}")
    return data


def get(key, lang="en"):
    return load()[key][lang]


def _fields(text):
    return {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}


def check():
    """One line per entry whose languages drifted apart (or take different fields)."""
    out = []
    for key, entry in load().items():
        where = f"autograder/build/{PATH.name}: {key}"
        if str(entry.get("pair")) != pair_digest(entry):
            out.append(
                f"{where}: one language changed without the other (make the same change in "
                f"{' and '.join(LANGUAGES)}, then `python -m autograder.build.stamp texts:{key}`)"
            )
        elif len({frozenset(_fields(entry[lang])) for lang in LANGUAGES}) != 1:
            out.append(f"{where}: the languages take different {{fields}}")
    return out


def stamp(keys=None):
    """Record the pair hash of the named entries (all when None) in texts.yml; returns the keys stamped."""
    data = load()
    text = PATH.read_text(encoding="utf-8")
    done = []
    lines = text.split("\n")
    current = None
    for i, line in enumerate(lines):
        if line and not line.startswith((" ", "#")) and line.endswith(":"):
            current = line[:-1]
        elif line.startswith("  pair:") and current in data and (keys is None or current in keys):
            lines[i] = f'  pair: "{pair_digest(data[current])}"'
            done.append(current)
    PATH.write_text("\n".join(lines), encoding="utf-8")
    load.cache_clear()
    return done
