"""Counterexamples on the audit catalog: how many value failures show one, how small
they are, and what the search adds to a submission's grading time.

    python bench/counterexamples.py [--assignment NAME] [--limit N] [--lang en]

Every buggy catalog entry (of NAME, or all; the first N of each assignment with
--limit) is filled into the student notebook as the audit fills it and graded in
this process (one fork server) twice, back to back: with the search off
(grading.yml `scoring.counterexample.calls: 0`) and on (grading.yml's budget),
each first for half the entries;
without the training lab's `training_run` (it searches nothing and takes about
40 s a lab submission here) unless --with-training-run.
Prints:

- the value failures of function questions, then of module questions (the
  questions an entry targets whose checks failed comparing a call's output with the
  reference's: results.json's `checks[].compared`) and the share that show a
  counterexample (`QuestionResult.counterexample`); then
  those whose first value failure is a gradient's or one in a lower precision
  (the dtype check), each shown by a counterexample of that kind;
- the size of those shown: elements in the largest tensor (inputs, outputs, and a
  module's parameters where they are shown), median and largest;
- each search (one per failing question, as the judge logs them in
  `shrink.STATS`): calls to the worker and seconds, median, 90th
  percentile and largest, and which found none (a second failing question of an
  entry, or a difference the search could not reproduce at fresh inputs);
- the time added per submission: the grading time with the search on minus off,
  median and mean, against the median submission's time with it off.

Figures, not a pass/fail: docs/pages/measurements.md may quote them with this command.
"""

import argparse
import dataclasses
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _quantile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assignment", help="one assignment (default: all)")
    parser.add_argument("--limit", type=int, help="the first N buggy entries of each assignment")
    parser.add_argument("--lang", default="en", help="the edition the entries are filled into (en, pt-BR)")
    parser.add_argument(
        "--with-training-run",
        action="store_true",
        help="also run the training lab's training_run (no search there; about 40 s a lab submission here)",
    )
    args = parser.parse_args(argv)

    from autograder import config
    from autograder.audit import catalog
    from autograder.audit import run as audit_run
    from autograder.judge import grade, shrink
    from autograder.judge.detect import question_name
    from autograder.judge.failure import COMPARED
    from autograder.sandbox.forkserver import ForkServer

    cfg = config.load(ROOT / "grading.yml")
    off = dataclasses.replace(
        cfg,
        data={
            **cfg.data,
            "scoring": {**cfg.scoring, "counterexample": {**dataclasses.asdict(shrink.Budget()), "calls": 0}},
        },
    )
    chosen = []
    for a in [args.assignment] if args.assignment else cfg.assignments:
        buggy = [e for e in catalog.entries(a) if not e.correct]
        chosen += buggy[: args.limit] if args.limit else buggy
    kinds = {}  # question -> "function" or "module" (a class: built with the judge's parameters)
    for a in cfg.assignments:
        for obj in catalog.reference_sources(a):
            kinds[question_name(obj)] = "module" if obj[:1].isupper() else "function"
    kinds_shown = ("function", "module", "function gradient", "module gradient", "function dtype", "module dtype")
    figures = {kind: {"failures": 0, "shown": 0, "sizes": [], "missing": []} for kind in kinds_shown}
    added, base = [], []
    searches = []
    skip = [] if args.with_training_run else ["-k", "not training_run"]
    fs = ForkServer()
    try:
        with tempfile.TemporaryDirectory(prefix="kit-cx-") as tmp:
            files = audit_run.fill_catalog(chosen, tmp, args.lang)
            for n, (entry, path) in enumerate(zip(chosen, files), 1):
                timed = {}
                before = len(shrink.STATS)
                for which in ("off", "on") if n % 2 else ("on", "off"):  # each first half the time (a warm second)
                    start = time.monotonic()
                    graded = grade(
                        path, cfg=off if which == "off" else cfg, forkserver=fs, lang=args.lang, pytest_args=skip
                    )
                    timed[which] = time.monotonic() - start
                    if which == "on":
                        result = graded
                t_off, t_on = timed["off"], timed["on"]
                searches += [{**one, "entry": f"{entry.assignment}/{entry.name}"} for one in shrink.STATS[before:]]
                added.append(t_on - t_off)
                base.append(t_off)
                for q in entry.questions:
                    r = result.questions.get(q)
                    # the first kind of value comparison the question's checks failed (`Failure.compared`)
                    compared = {c for record in (r.checks if r else []) for c in record.get("compared", ())}
                    failure = next((f for f in COMPARED if f in compared), None)
                    if r is None or failure is None:
                        continue
                    kind = kinds.get(q, "function")
                    fig = figures[kind if failure == "output" else f"{kind} {failure}"]
                    fig["failures"] += 1
                    if r.counterexample is not None:
                        fig["shown"] += 1
                        fig["sizes"].append(r.counterexample.largest)
                    else:
                        fig["missing"].append(f"{entry.assignment}/{entry.name} ({q})")
                if sys.stderr.isatty():
                    print(f"\r{n}/{len(chosen)} graded", end="", file=sys.stderr, flush=True)
    finally:
        fs.close()
    print(file=sys.stderr)
    run = "with" if args.with_training_run else "without"
    print(
        f"buggy entries graded: {len(chosen)} ({args.lang} edition, {run} training_run), each with the search off and on"
    )
    for kind, fig in figures.items():
        failures, shown, sizes = fig["failures"], fig["shown"], fig["sizes"]
        if not failures and " " in kind:
            print(f"value failures of {kind} questions (no output failure first): none in the catalog")
            continue
        pct = f" ({100 * shown / failures:.0f}%)" if failures else ""
        print(f"value failures of {kind} questions with a counterexample: {shown}/{failures}{pct}")
        for m in fig["missing"]:
            print(f"  without one: {m}")
        if sizes:
            print(
                f"  elements in the largest tensor shown ({'inputs, parameters shown and outputs' if kind == 'module' else 'inputs and outputs'}): "
                f"median {statistics.median(sizes):g}, largest {max(sizes)}, at most 6 in {sum(s <= 6 for s in sizes)}/{len(sizes)}"
            )
    if searches:
        calls = [s["calls"] for s in searches]
        secs = [s["seconds"] for s in searches]
        print(
            f"searches: {len(searches)} ({sum(not s['found'] for s in searches)} found none); calls per search "
            f"median {statistics.median(calls):g}, 90th percentile {_quantile(calls, 0.9)}, largest {max(calls)}; "
            f"seconds per search median {statistics.median(secs):.3f}, 90th percentile {_quantile(secs, 0.9):.3f}, "
            f"largest {max(secs):.3f}"
        )
        for one in searches:
            if not one["found"]:
                print(f"  found none: {one['entry']} ({one['name']}, {one['calls']} calls, {one['seconds']:.3f} s)")
    if added:
        print(
            f"time added per submission (on minus off): median {statistics.median(added):+.3f} s, "
            f"mean {statistics.mean(added):+.3f} s; searching alone: mean "
            f"{sum(s['seconds'] for s in searches) / len(added):.3f} s; a submission with the search off: "
            f"median {statistics.median(base):.2f} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
