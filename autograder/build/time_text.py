"""The times a notebook promises, generated from measured figures at build time.

A promise such as "the training takes about a minute" is only as good as its
measurement, so no notebook states one by hand: two kinds of generated markdown
cell, each found by its tag in the master notebook, say it from the committed
figures of `bench/notebook_times.py` (`bench/figures/notebook_times.json`, CPU
seconds of the reference on one core):

- `kit-time`: the whole notebook, run top to bottom with a correct solution, and
  the part of it spent in the training cells;
- `kit-time-training`: the code cell right below it (a training cell).

Each time is said as a rounded range that holds the figure ("5 to 6 minutes") and the
figure itself. `sync` writes the English into the master notebook (a new figure is
drift until the next build); `editions.localize` puts each edition's text in its
place. The sentences are the build's own texts (`texts.yml`, keys `time_*`).
"""

import json
import math
from functools import lru_cache

from autograder import layout
from autograder.build import texts

TAG = "kit-time"
TRAINING_TAG = "kit-time-training"
TAGS = (TAG, TRAINING_TAG)
FIGURES = layout.KIT_ROOT / "bench" / "figures" / "notebook_times.json"


class TimeTextError(Exception):
    pass


@lru_cache(maxsize=1)
def _read():
    try:
        return json.loads(FIGURES.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


def figures(missing_ok=False):
    """The committed figures: {"assignments": {name: {"notebook": s, "training": s, "cells": {id: s}}}, ...}
    (CPU seconds; "training": the cell below the `kit-time-training` cell; "cells": every code
    cell of 1 s or more, by its id in the student notebook)."""
    data = _read()
    if data is None:
        if missing_ok:
            return {"assignments": {}}
        raise TimeTextError(f"no {FIGURES.name}: run `python bench/notebook_times.py --write`")
    return json.loads(json.dumps(data))  # a copy the caller may change


def tag_of(tags):
    found = [t for t in TAGS if t in tags]
    return found[0] if found else None


def _cells(nb):
    return nb["cells"] if isinstance(nb, dict) else nb.cells


def _tags(cell):
    return (cell.get("metadata") or {}).get("tags") or []


def training_cells(nb):
    """The ids of the code cells described by a `kit-time-training` cell (the next code cell)."""
    cells = _cells(nb)
    out = []
    for i, cell in enumerate(cells):
        if TRAINING_TAG in _tags(cell):
            below = next((c for c in cells[i + 1 :] if c.get("cell_type") == "code"), None)
            if below is None:
                raise TimeTextError(f"a {TRAINING_TAG} cell has no code cell below it")
            out.append(below.get("id"))
    return out


def cells(assignment):
    """The tags of the time cells of an assignment's master notebook (empty: it promises no time)."""
    path = layout.COURSE / "assignments" / assignment / f"{assignment}.ipynb" if layout.COURSE else None
    if path is None or not path.exists():
        return []
    return [tag_of(_tags(c)) for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if tag_of(_tags(c))]


def span(seconds, lang):
    """A rounded range that holds `seconds` ("under a minute", "5 to 6 minutes")."""
    if seconds < 60:
        return texts.get("time_under_minute", lang)
    lo = math.floor(seconds / 60)
    return texts.get("time_minutes", lang).format(lo=lo, hi=lo + 1)


def _figure(assignment):
    data = figures()["assignments"].get(assignment)
    if data is None:
        raise TimeTextError(
            f"{assignment}: no figures in {FIGURES.name} (run `python bench/notebook_times.py --write`)"
        )
    return data


def render(tag, assignment, lang, nb):
    """The text of the generated cell tagged `tag` in `nb` (the assignment's notebook)."""
    data = _figure(assignment)
    trains = training_cells(nb)
    if len(trains) > 1:
        raise TimeTextError(f"{assignment}: one {TRAINING_TAG} cell per notebook (found {len(trains)})")
    if trains and "training" not in data:
        raise TimeTextError(
            f"{assignment}: no figure of its training cell in {FIGURES.name} "
            "(run `python bench/notebook_times.py --write`)"
        )
    if tag == TAG:
        fields = {"notebook": span(data["notebook"], lang), "seconds": round(data["notebook"])}
        if not trains:
            return texts.get("time_notebook", lang).format(**fields)
        return texts.get("time_notebook_training", lang).format(training=round(data["training"]), **fields)
    if tag == TRAINING_TAG:
        return texts.get("time_training", lang).format(
            training=span(data["training"], lang), seconds=round(data["training"])
        )
    raise ValueError(f"no generated time text for the tag {tag!r}")
