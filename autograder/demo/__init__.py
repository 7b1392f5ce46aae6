"""`python -m autograder demo`: build every assignment, grade the example
submissions with the kit's judge and through each autograder zip run the way
Gradescope runs it, and print a score table with what each was expected to score.
Exits non-zero when any example scores other than expected, or the two paths disagree.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from autograder import config as config_mod
from autograder import release
from autograder.audit import examples as examples_mod
from autograder.grade import grade_batch


def run_zip(zip_path, submission, workdir, timeout=900):
    """Grade `submission` with an autograder zip in a Gradescope-like layout.

    ROOT/source holds the unzipped zip, ROOT/submission the file, and
    `run_autograder` writes ROOT/results/results.json. setup.sh is not run: the
    current Python environment stands in for the image it would build.
    """
    root = Path(workdir)
    for d in ("source", "submission", "results"):
        (root / d).mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(root / "source")
    shutil.copy(submission, root / "submission" / Path(submission).name)
    env = {
        **os.environ,
        "KIT_AUTOGRADER_ROOT": str(root),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    proc = subprocess.run(
        ["bash", str(root / "source" / "run_autograder")],
        cwd=root / "source",
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    results = root / "results" / "results.json"
    if not results.exists():
        raise RuntimeError(f"run_autograder wrote no results.json (exit {proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(results.read_text())


def question_scores(data):
    return {t["name"]: t["score"] for t in release.scored(data.get("tests")) if t["name"] != "Public Tests"}


def verdict(expect, scores, maxes):
    lost = sorted(q for q in maxes if scores.get(q, 0) < maxes[q])
    if expect["expect"] == "zero":
        return all(scores.get(q, 0) == 0 for q in maxes), "0 everywhere"
    want = sorted(expect["loses"])
    return lost == want, ("full marks" if not want else f"loses on {', '.join(want)}")


def main(*, out: str = "demo-out") -> int:
    """`demo`: build everything into `out`, grade the example submissions, print a score table."""
    cfg = config_mod.load()
    folder = Path(out)
    start = time.monotonic()
    from autograder import build

    print("== build", flush=True)
    rc = build.main(out=str(folder / "dist"))
    if rc:
        return rc
    expected = examples_mod.expected()
    files = [examples_mod.EXAMPLES / rel for rel in sorted(expected)]
    print(f"\n== grade {len(files)} example submissions with the kit's judge", flush=True)
    t0 = time.monotonic()
    rows = grade_batch(files, folder / "grades", cfg=cfg, progress=True)
    judge_seconds = time.monotonic() - t0
    by_path = {Path(p).resolve(): data for _, p, data in rows}

    print("\n== the same submissions through each autograder zip (run_autograder, Gradescope layout)", flush=True)
    zip_scores = {}
    t0 = time.monotonic()
    for rel in sorted(expected):
        a = expected[rel]["assignment"]
        zips = sorted((folder / "dist" / a).glob("*-autograder*.zip"))
        if not zips:
            print(f"no autograder zip for {a} under {folder / 'dist' / a}", file=sys.stderr)
            return 1
        with tempfile.TemporaryDirectory(prefix="kit-gs-") as tmp:
            zip_scores[rel] = question_scores(run_zip(zips[0], examples_mod.EXAMPLES / rel, tmp))
        print(f"  {rel}", flush=True)
    zip_seconds = time.monotonic() - t0

    print("\n== scores (judge | zip)")
    failures = 0
    width = max(len(r) for r in expected) + 2
    for rel in sorted(expected):
        exp = expected[rel]
        maxes = cfg.questions(exp["assignment"])
        data = by_path[(examples_mod.EXAMPLES / rel).resolve()]
        judge = question_scores(data)
        ok, want = verdict(exp, judge, maxes)
        same = all(abs(judge.get(q, 0) - zip_scores[rel].get(q, -1)) < 1e-9 for q in maxes)
        total = sum(maxes.values())
        zip_total = sum(zip_scores[rel].get(q, 0) for q in maxes)
        fault = (data.get("extra_data") or {}).get("status") == "internal_error"  # never an expected score
        flag = "GRADER FAULT" if fault else "ok" if ok and same else ("ZIP DIFFERS" if ok else "UNEXPECTED")
        failures += flag != "ok"
        print(
            f"  {rel.ljust(width)} {data.get('score', 0):6.2f} | {zip_total:6.2f} / {total:<4g} "
            f"expected {want:<45} {flag}"
        )
    print(
        f"\njudge: {judge_seconds:.1f} s for {len(files)} submissions; "
        f"zips: {zip_seconds:.1f} s; total {time.monotonic() - start:.1f} s"
    )
    print(f"results: {folder / 'grades'}/<id>/results.json and {folder / 'grades' / 'grades.csv'}")
    if failures:
        print(f"{failures} example(s) did not score as expected", file=sys.stderr)
        return 1
    print("every example scored as expected, through the judge and through the zips")
    return 0
