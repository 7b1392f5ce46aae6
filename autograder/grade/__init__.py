"""`python -m autograder grade`: grade a batch of submissions in the trusted judge.

Writes OUT/<id>/results.json (Gradescope's format) as each submission
finishes, then OUT/grades.csv. The id is the file's stem, made unique with its
parent folder when stems collide (Gradescope exports give every student the
same notebook name). A broken submission scores what it earned with a message
saying why, and the batch goes on.
"""
import csv
import json
import os
import sys
import time
import traceback
from pathlib import Path

from autograder import config as config_mod

SUFFIXES = (".ipynb", ".zip")


def collect(paths):
    """Submission files from files and folders (folders: *.ipynb and *.zip inside)."""
    found = []
    for p in map(Path, paths):
        if p.is_dir():
            for f in sorted(p.rglob("*")):
                if f.is_file() and f.suffix in SUFFIXES and ".ipynb_checkpoints" not in f.parts:
                    found.append(f)
        else:
            found.append(p)  # any file name: a bad file gets a clear message, not a skip
    return found


def assign_ids(files):
    """{path: id}: the stem, or parent-stem where stems collide, unique either way."""
    stems = {}
    for f in files:
        stems.setdefault(f.stem, []).append(f)
    ids, used = {}, set()
    for f in files:
        base = f.stem if len(stems[f.stem]) == 1 else f"{f.parent.name}-{f.stem}"
        candidate, n = base, 2
        while candidate in used:
            candidate, n = f"{base}-{n}", n + 1
        used.add(candidate)
        ids[f] = candidate
    return ids


class Progress:
    def __init__(self, total, enabled=True, stream=sys.stderr):
        self.total, self.done, self.start = total, 0, time.monotonic()
        self.enabled, self.stream = enabled, stream
        self.tty = getattr(stream, "isatty", lambda: False)()

    def step(self, label):
        self.done += 1
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else 0.0
        width = 24
        filled = int(width * self.done / max(self.total, 1))
        bar = "#" * filled + "-" * (width - filled)
        line = (f"[{bar}] {self.done}/{self.total} {rate * 60:.1f}/min "
                f"ETA {eta:.0f}s  {label[:40]}")
        if self.tty:
            self.stream.write("\r" + line.ljust(100))
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def write_json_atomic(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2))
    os.replace(tmp, path)


def grade_one(path, assignment, cfg, forkserver=None):
    """results.json dict for one file; never raises."""
    from autograder.judge import grade

    try:
        result = grade(path, assignment, cfg, forkserver=forkserver)
        data = result.to_gradescope()
        data["assignment"] = result.assignment
        if getattr(result, "internal_errors", None):
            data["internal_errors"] = result.internal_errors
        return data
    except Exception as exc:  # noqa: BLE001 - a judge bug must not stop the batch
        return {
            "score": 0.0, "tests": [], "assignment": assignment,
            "output": f"Not graded: internal grader error ({type(exc).__name__}: {exc}); reported to the course staff",
            "internal_errors": [traceback.format_exc()],
        }


def write_csv(out, rows, cfg):
    """grades.csv: id, path, one column per question, total."""
    names = []
    for a in cfg.assignments:
        if any(r[2].get("assignment") == a for r in rows):
            names += [q for q in cfg.questions(a) if q not in names]
    with open(out / "grades.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "path", *names, "total"])
        for sid, path, data in rows:
            scores = {t["name"]: t["score"] for t in data.get("tests", [])}
            w.writerow([sid, str(path), *[scores.get(n, "") for n in names], data.get("score", 0.0)])


# -- a pool of judges ---------------------------------------------------------
# Each pool process is a trusted judge with its own worker uid (sandbox.worker_uid) and its
# own fork server, so torch is imported once per judge, not once per submission.
_POOL = {}


def _pool_init(assignment, config_path):
    import atexit

    from autograder.sandbox.forkserver import ForkServer

    _POOL["assignment"] = assignment
    _POOL["cfg"] = config_mod.load(config_path)  # the batch's own grading.yml, not the pool's cwd
    _POOL["forkserver"] = ForkServer()
    atexit.register(_POOL["forkserver"].close)


def _pool_grade(path):
    return grade_one(Path(path), _POOL["assignment"], _POOL["cfg"], _POOL["forkserver"])


def _grade_all(todo, assignment, cfg, jobs, done):
    """Grade [(path, id)], calling done(path, id, data) as each finishes."""
    if jobs <= 1 or len(todo) <= 1:
        from autograder.sandbox.forkserver import ForkServer

        forkserver = ForkServer() if todo else None
        try:
            for f, sid in todo:
                done(f, sid, grade_one(f, assignment, cfg, forkserver))
        finally:
            if forkserver is not None:
                forkserver.close()
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    ctx = multiprocessing.get_context("spawn")  # judges start clean: no torch state forked
    with ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_pool_init,
                             initargs=(assignment, str(cfg.path))) as pool:
        futures = {pool.submit(_pool_grade, str(f)): (f, sid) for f, sid in todo}
        for fut in as_completed(futures):
            f, sid = futures[fut]
            try:
                data = fut.result()
            except Exception as exc:  # noqa: BLE001 - a judge process died: grade it alone
                data = grade_one(f, assignment, cfg)
                data.setdefault("internal_errors", []).append(f"pool: {type(exc).__name__}: {exc}")
            done(f, sid, data)


def grade_batch(paths, out, assignment=None, resume=False, progress=True, cfg=None, jobs=None):
    """Grade every submission under `paths` into `out`; returns [(id, path, results)] in input order.

    Results are written as each submission finishes, so an interrupted batch
    resumes (`resume=True`) without regrading what is done.
    """
    cfg = cfg or config_mod.load()
    jobs = jobs or os.cpu_count() or 1
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files = collect(paths)
    ids = assign_ids(files)
    bar = Progress(len(files), progress)
    results, todo = {}, []
    for f in files:
        target = out / ids[f] / "results.json"
        if resume and target.exists():
            try:
                results[f] = json.loads(target.read_text())
                bar.step(ids[f] + " (done before)")
                continue
            except ValueError:
                pass
        todo.append((f, ids[f]))

    def done(f, sid, data):
        write_json_atomic(out / sid / "results.json", data)
        results[f] = data
        bar.step(sid)

    _grade_all(todo, assignment, cfg, min(jobs, max(len(todo), 1)), done)
    rows = [(ids[f], f, results[f]) for f in files]
    write_csv(out, rows, cfg)
    return rows


def score_table(rows, cfg):
    """A plain-text table: one row per submission, one column per question."""
    lines = []
    by_assignment = {}
    for sid, path, data in rows:
        by_assignment.setdefault(data.get("assignment"), []).append((sid, data))
    for a, items in by_assignment.items():
        qs = list(cfg.questions(a)) if a in cfg.assignments else []
        maxes = {q: p for q, p in cfg.questions(a).items()} if qs else {}
        width = max([len(s) for s, _ in items] + [10])
        lines.append(f"\n{a or '(unknown assignment)'}")
        lines.append("  " + "submission".ljust(width) + "".join(f"{q[:14]:>16}" for q in qs) + f"{'total':>10}")
        for sid, data in items:
            scores = {t["name"]: t["score"] for t in data.get("tests", [])}
            cells = "".join(f"{scores.get(q, 0):>10g}/{maxes[q]:<5g}" for q in qs)
            total = sum(maxes.values()) if maxes else 0
            lines.append("  " + sid.ljust(width) + cells + f"{data.get('score', 0):>5g}/{total:<4g}")
    return "\n".join(lines)


def main(args):
    cfg = config_mod.load()
    if args.assignment and args.assignment not in cfg.assignments:
        print(f"unknown assignment {args.assignment!r}; known: {', '.join(cfg.assignments)}", file=sys.stderr)
        return 2
    rows = grade_batch(args.submissions, args.out, args.assignment, args.resume, not args.no_progress, cfg,
                       jobs=args.jobs)
    if not rows:
        print("no submissions found", file=sys.stderr)
        return 2
    print(score_table(rows, cfg))
    print(f"\nwrote {len(rows)} results to {args.out}/<id>/results.json and {args.out}/grades.csv")
    return 0
