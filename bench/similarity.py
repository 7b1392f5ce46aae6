"""The similar-submissions check on a synthetic class: recall on planted copies, false pairs
among independent solutions (autograder/report/similar.py; docs/pages/measurements.md).

    python bench/similarity.py [--students 300] [--copies 15] [--seeds 5] [--assignment NAME ...]

For each assignment chosen (`--assignment`, repeatable; default: every one grading.yml lists
that has a synthetic class, `autograder.declarations.similar_class`), each seed draws a class
of its graded functions: `students - copies` students who each write every step their own
way (the assignment's similar_class.py; autograder/audit/similar_class.py), and
`copies` students who hand in a disguised copy of one of them (locals renamed, neighbouring
statements swapped, docstring and comments rewritten, the layout changed). The starter code
(the student template's stubs) is subtracted as the report does. Printed per threshold: the
planted pairs found (recall), the honest pairs listed (false pairs) and their share of all
honest pairs; and the floor no token comparison can go under: honest pairs whose code is the
same token for token once names are normalised.
"""

import argparse
import json
import random
import sys
import time
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import chosen  # noqa: E402

from autograder import declarations  # noqa: E402
from autograder.audit import similar_class  # noqa: E402
from autograder.report import similar, similar_page  # noqa: E402

THRESHOLDS = (0.7, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97)


def starter(assignment, students):
    nb = json.loads((ROOT / "student_template" / "en" / f"{assignment}.ipynb").read_text())
    return similar.function_sources(nb, students.FUNCTIONS)


def identical(cls, planted):
    """Honest pairs whose normalised tokens are the same in every function."""
    keys = {
        sid: tuple(tuple(t for t, _ in similar.tokens(src)) for _, src in sorted(per.items()))
        for sid, per in cls.items()
    }
    return sum(1 for a, b in combinations(sorted(cls), 2) if (a, b) not in planted and keys[a] == keys[b])


def copydetect_pairs(cls, stubs, noise):
    """{(a, b): similarity} from copydetect (pip install copydetect), each student's functions
    in one file, the stubs its boilerplate; a pair's similarity: the smaller of its two
    overlaps (copydetect's per-file share of the other)."""
    import tempfile

    from copydetect import CopyDetector

    with tempfile.TemporaryDirectory() as tmp:
        subs, boiler = Path(tmp, "subs"), Path(tmp, "boiler")
        subs.mkdir()
        boiler.mkdir()
        for sid, per in cls.items():
            (subs / f"{sid}.py").write_text("\n\n".join(per[f] for f in sorted(per)))
        (boiler / "stubs.py").write_text("\n\n".join(stubs.values()))
        detector = CopyDetector(
            test_dirs=[str(subs)],
            boilerplate_dirs=[str(boiler)],
            extensions=["py"],
            noise_t=noise,
            guarantee_t=noise,
            display_t=0.0,
            autoopen=False,
            silent=True,
        )
        detector.run()
        names = [Path(f).stem for f in detector.test_files]
        m = detector.similarity_matrix
        return {
            tuple(sorted((names[i], names[j]))): float(min(m[i, j, 0], m[i, j, 1]))
            for i in range(len(names))
            for j in range(i + 1, len(names))
        }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--students", type=int, default=300)
    p.add_argument("--copies", type=int, default=15)
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--copydetect", type=int, metavar="NOISE", help="measure copydetect instead, k = NOISE tokens")
    p.add_argument("--page", metavar="HTML", help="write the first class's similar.html (the kit's threshold) here")
    p.add_argument("--window", type=int, default=similar.W, help="k-grams per winnowing window")
    p.add_argument("--own", type=int, default=0, help="graded functions each copier writes on their own")
    p.add_argument(
        "--common",
        type=float,
        default=similar.COMMON,
        help="the share of the class above which a fingerprint weighs nothing",
    )
    chosen.add_argument(p)
    args = p.parse_args()
    for assignment in chosen.assignments(args, "similarity"):
        students = declarations.similar_class(assignment)
        if students is None and args.assignment:
            raise SystemExit(f"similarity: {assignment} has no synthetic class (its folder's similar_class.py)")
        if students is not None:
            print(f"\n{assignment}")
            measure(assignment, students, args)


def measure(assignment, students, args):
    """Compare `args.seeds` synthetic classes of `assignment`; print the figures."""
    stubs = starter(assignment, students)
    rows = {th: [0, 0, 0] for th in THRESHOLDS}  # found, planted, false
    honest_pairs = floor = 0
    seconds = 0.0
    for seed in range(args.seeds):
        cls, planted = similar_class.planted_class(students, args.students, args.copies, random.Random(seed), args.own)
        start = time.perf_counter()
        if args.copydetect:
            scores = copydetect_pairs(cls, stubs, args.copydetect)
        else:
            found = similar.compare(cls, stubs, threshold=min(THRESHOLDS), common=args.common, window=args.window)
            scores = {(x.a, x.b): x.similarity for x in found}
            if args.page and seed == 0:
                listed = [x for x in found if x.similarity >= similar.THRESHOLD]
                html = similar_page.page({assignment: (len(cls), listed)}, {assignment: cls}, "en")
                Path(args.page).write_text(html, encoding="utf-8")
        seconds += time.perf_counter() - start
        n = len(cls)
        honest_pairs += n * (n - 1) // 2 - len(planted)
        floor += identical(cls, planted)
        for th in THRESHOLDS:
            got = {pair for pair, score in scores.items() if score >= th}
            rows[th][0] += len(got & planted)
            rows[th][1] += len(planted)
            rows[th][2] += len(got - planted)
    print(
        f"{args.seeds} classes of {args.students} ({args.copies} planted copies each, "
        f"{args.own} of {len(students.FUNCTIONS)} functions the copier's own); "
        f"compare: {seconds / args.seeds:.1f} s a class"
    )
    print(f"{'threshold':>9}  {'recall':>14}  {'false pairs':>12}  {'per honest pair':>15}  {'precision':>9}")
    for th, (found, total, false) in rows.items():
        precision = found / (found + false) if found + false else 1.0
        mark = "  <- the kit's" if th == similar.THRESHOLD else ""
        print(
            f"{th:>9.2f}  {found:>5}/{total:<4} {found / total:>4.0%}  {false:>12}  "
            f"{false / honest_pairs:>15.1e}  {precision:>9.0%}{mark}"
        )
    print(f"honest pairs identical once names are normalised (no token method tells them from copies): {floor}")


if __name__ == "__main__":
    main()
