"""`python -m autograder audit --hostile`: grade a battery of hostile and broken submissions.

Every case (each assignment's battery*.py, their helpers `cases.py`) is written to a temporary folder and graded by
`autograder.grade.grade_batch`, the real batch path, under short limits (a
copy of grading.yml with `limits` lowered, named by KIT_GRADING_YML). The
table shows, per case, what the grader must do, what it did, the wall time
(results.json's execution_time), the peak memory of the case's workers
(results.json's extra_data.worker_peak_mb, measured by their control groups:
what they allocated beyond the fork server's shared pages; "-" where no
control group could be made) and the verdict: `held`, `VIOLATED`, or `gap` (a
documented known hole, shown but not failing the run). Exit status 1 when any
case is violated.

While it runs, the battery listens on a TCP port of this machine (no case may
connect to it) and leaves an autograder-like zip holding a solution in its
temporary folder (no case may read it).
"""

import importlib
import json
import os
import socket
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path

import yaml

from autograder import config as config_mod
from autograder import declarations, layout, release
from autograder.audit.hostile.cases import BATTERY, CASES, SECRET_ENV, reference

for _module in declarations.battery_modules():  # each assignment's own cases register on import
    importlib.import_module(_module)

MAX_RESULTS_BYTES = 200_000  # no case may inflate results.json past this
SHORT_LIMITS = {
    "cpu_seconds_per_call": 3,
    "load_seconds": 20,
    "memory_mb": 2048,
    "output_bytes": 200000,
    "submission_seconds": 90,
    "disk_mb": 32,
}


class Listener:
    """A TCP port on this machine's loopback that records what connects to it."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.received = []
        self.stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    self.received.append(conn.recv(100).decode(errors="replace") or "(connected)")
                except OSError:
                    self.received.append("(connected)")

    def close(self):
        self.stop = True
        self.thread.join(timeout=2)
        self.sock.close()


def _messages(data):
    return "\n".join([data.get("output", "")] + [t.get("output", "") for t in data.get("tests", [])])


def _distinctive_lines(path, visible):
    lines = []
    for line in (layout.PACKAGE / path).read_text().splitlines():
        s = line.strip()
        if len(s) >= 20 and (s.startswith(("def ", "from ", "import ", "return ")) or " = " in s) and s not in visible:
            lines.append(s)
    return lines


def check(case, data, by_name, received=()):
    """[problems] for one case's results.json dict (empty: the expectation held)."""
    e = case.expect
    problems = []
    if data is None:
        return ["no results.json written"]
    if e.get("no_network") and received:
        problems.append(f"the judge's machine received a connection: {received[0][:40]!r}")
    # whatever a student sends, the kit must not fail on it: a grader fault is never the case's outcome
    extra = data.get("extra_data") or {}
    if extra.get("status") == "internal_error" or extra.get("internal_errors") or data.get("internal_errors"):
        first = (data.get("internal_errors") or ["?"])[0]
        problems.append(f"a grader fault (status {extra.get('status')}): {' '.join(str(first).split())[:120]}")
    scores = {t["name"]: (t["score"], t["max_score"]) for t in release.scored(data.get("tests"))}
    total = data.get("score", 0.0)
    if "max_score" in e and total > e["max_score"] + 1e-9:
        problems.append(f"score {total:g} > {e['max_score']:g}")
    for q in e.get("questions_keep_full", []):
        s, m = scores.get(q, (0, 1))
        if s < m:
            problems.append(f"{q} lost points ({s:g}/{m:g})")
    for q in e.get("questions_lose", []):
        s, m = scores.get(q, (0, 1))
        if s >= m:
            problems.append(f"{q} kept full points")
    for q in e.get("questions_zero", []):
        if scores.get(q, (0, 0))[0] > 0:
            problems.append(f"{q} scored {scores[q][0]:g}")
    if e.get("not_above"):
        control = by_name.get(e["not_above"])
        cscores = {t["name"]: t["score"] for t in release.scored((control or {}).get("tests"))}
        for q, (s, _) in scores.items():
            if s > cscores.get(q, 0) + 1e-9:
                problems.append(f"{q} {s:g} > {cscores.get(q, 0):g} in {e['not_above']}")
    text = json.dumps(data)
    if len(text) > e.get("max_results_bytes", MAX_RESULTS_BYTES):
        problems.append(f"results.json is {len(text)} bytes")
    if "max_seconds" in e and data.get("execution_time", 0) > e["max_seconds"]:
        problems.append(f"took {data.get('execution_time'):.0f} s > {e['max_seconds']} s")
    raw = json.loads(text)  # what the student's text became, unescaped
    messages = _messages(raw)
    wants = e.get("reason_contains")
    if wants and not any(w in messages for w in wants):
        problems.append(f"no message with {' / '.join(map(repr, wants))}")
    for bad in list(e.get("must_not_contain", [])) + [SECRET_ENV[1]]:
        if bad in text or bad in messages:
            problems.append(f"results.json shows {bad!r}")
    if e.get("leak_files"):
        visible = json.dumps(reference(case.assignment))
        for path in e["leak_files"]:
            leaked = [s for s in _distinctive_lines(path, visible) if s in messages]
            if leaked:
                problems.append(f"{path} leaked: {leaked[0][:60]!r}")
    if "max_score" in e and e["max_score"] > 0 and not data.get("tests"):
        problems.append("not graded: " + (data.get("output", "").splitlines() or [""])[0][:80])
    return problems


def _expected(e):
    parts = []
    if "max_score" in e:
        parts.append(f"<={e['max_score']:g}")
    if e.get("not_above"):
        parts.append(f"<={e['not_above']}")
    if e.get("questions_zero"):
        parts.append("0 on " + ",".join(q[:12] for q in e["questions_zero"]))
    if e.get("questions_lose"):
        parts.append("loses " + ",".join(q[:12] for q in e["questions_lose"]))
    if e.get("no_network"):
        parts.append("no connection")
    if e.get("questions_keep_full"):
        parts.append("full " + ",".join(q[:12] for q in e["questions_keep_full"]))
    return "; ".join(parts)


def _got(data):
    if data is None:
        return "no results"
    if not data.get("tests"):
        return f"{data.get('score', 0):g} (not graded)"
    cells = " ".join(f"{t['score']:g}" for t in release.scored(data["tests"]))
    return f"{data['score']:g} [{cells}]"


def _reason(data):
    """A case's one line for the battery's printout, from results.json's data (never its words
    read back): why it was not graded or could not run, else the first failure its feedback
    shows (`extra_data.feedback`), else the first submission-wide note, in its language."""
    if data is None:
        return ""
    from autograder import messages
    from autograder.messages import t

    extra = data.get("extra_data") or {}
    flags = extra.get("flags") or {}
    failure = next((r["failure"] for r in extra.get("feedback") or [] if isinstance(r, dict) and r.get("failure")), "")
    lang = extra.get("language") if extra.get("language") in messages.LANGUAGES else None
    with messages.language(lang):
        if flags.get("not_graded"):
            line = t("not_graded_note", reason=flags["not_graded"])
        elif flags.get("not_run"):
            line = t("not_run", reason=flags["not_run"])
        elif failure:
            line = f"{t('fail_prefix')} {failure}"
        else:
            line = next(iter(str(data.get("output") or "").splitlines()), "")
    return " ".join(str(line).split())[:110]


def run(progress=True, cases=None, out=sys.stdout, jobs=None):
    """Grade the battery; returns [(case, data, problems, verdict)]."""
    from autograder.grade import grade_batch

    chosen = list(cases or CASES)
    skipped = [c for c in chosen if c.expect.get("root_only") and os.geteuid() != 0]
    chosen = [c for c in chosen if c not in skipped]
    with tempfile.TemporaryDirectory(prefix="kit-hostile-") as tmp:
        tmp = Path(tmp)
        base = yaml.safe_load(config_mod.load().path.read_text())
        base["limits"] = {**(base.get("limits") or {}), **SHORT_LIMITS}
        yml = tmp / "grading.yml"
        yml.write_text(yaml.safe_dump(base, sort_keys=False))
        listener = Listener()
        BATTERY["port"] = listener.port
        BATTERY["zip"] = str(tmp / "autograder.zip")
        with zipfile.ZipFile(BATTERY["zip"], "w") as zf:
            for name in declarations.names():  # every assignment's solution: whichever a case grades
                if (layout.SOLUTIONS / f"{name}.py").is_file():
                    zf.write(layout.SOLUTIONS / f"{name}.py", f"kit/autograder/private/solutions/{name}.py")
        files = []
        for c in chosen:
            suffix, data = c.build()
            path = tmp / "cases" / c.name / f"{c.expect.get('file_name', c.name)}{suffix}"
            path.parent.mkdir(parents=True)
            path.write_bytes(data)
            files.append(path)
        saved = {k: os.environ.get(k) for k in (SECRET_ENV[0],)}
        os.environ[SECRET_ENV[0]] = SECRET_ENV[1]  # a judge secret no case may show
        try:
            cfg = config_mod.load(str(yml))
            start = time.monotonic()
            # the battery's expectations quote the English feedback
            rows = grade_batch(files, tmp / "out", progress=progress, cfg=cfg, jobs=jobs, lang="en")
            elapsed = time.monotonic() - start
        finally:
            listener.close()
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        results = {}
        for c, (sid, _, _) in zip(chosen, rows):
            target = tmp / "out" / sid / "results.json"
            results[c.name] = json.loads(target.read_text()) if target.exists() else None
    report = []
    for c in chosen:
        data = results[c.name]
        problems = check(c, data, results, listener.received)
        verdict = "held" if not problems else ("gap" if c.expect.get("gap") else "VIOLATED")
        report.append((c, data, problems, verdict))
    report += [(c, None, [c.expect["root_only"]], "skipped") for c in skipped]
    _print(report, elapsed, out)
    return report


def _print(report, elapsed, out):
    w = max(len(r[0].name) for r in report) + 2
    print(f"\nhostile battery: {len(report)} cases, limits {SHORT_LIMITS}", file=out)
    print(
        "  "
        + "case".ljust(w)
        + "expected".ljust(62)
        + "got".ljust(22)
        + "wall s".rjust(7)
        + "  peak MB  judge MB  verdict",
        file=out,
    )
    for c, data, problems, verdict in report:
        if verdict == "skipped":
            print("  " + c.name.ljust(w) + f"skipped: {problems[0]}", file=out)
            continue
        wall = f"{data.get('execution_time', 0):.1f}" if data else "-"
        peak = ((data or {}).get("extra_data") or {}).get("worker_peak_mb")
        peak = f"{peak:.0f}" if isinstance(peak, (int, float)) else "-"
        judge = ((data or {}).get("extra_data") or {}).get("judge_peak_mb")
        judge = f"{judge:.0f}" if isinstance(judge, (int, float)) else "-"
        print(
            "  "
            + c.name.ljust(w)
            + _expected(c.expect)[:60].ljust(62)
            + _got(data)[:21].ljust(22)
            + wall.rjust(7)
            + "  "
            + peak.rjust(7)
            + "  "
            + judge.rjust(8)
            + "  "
            + verdict,
            file=out,
        )
        print("  " + " " * w + f"does: {c.what[:100]}", file=out)
        reason = _reason(data)
        if reason:
            print("  " + " " * w + f"reason: {reason}", file=out)
        for p in problems:
            print("  " + " " * w + f"!! {p}", file=out)
        if verdict == "gap":
            print("  " + " " * w + f"known gap: {c.expect['gap']}", file=out)
    counts = {v: sum(r[3] == v for r in report) for v in ("held", "gap", "VIOLATED", "skipped")}
    print(
        f"\nheld {counts['held']}, known gaps {counts['gap']}, violated {counts['VIOLATED']}, "
        f"skipped {counts['skipped']}; "
        f"graded in {elapsed:.0f} s; peak MB: the case's workers (control group; '-' where none); "
        f"judge MB: the judge process's own peak resident memory while it graded the case",
        file=out,
    )


def main(*, no_progress: bool = False, case: Sequence[str] | None = None) -> int:
    """`audit --hostile`: grade the battery (only the cases named in `case`, if any) and print the verdicts."""
    names = case or []
    unknown = [n for n in names if n not in {c.name for c in CASES}]
    if unknown:
        print(f"audit --hostile: no case named {unknown[0]!r}", file=sys.stderr)
        return 2
    chosen = [c for c in CASES if c.name in names] if names else None
    report = run(progress=not no_progress, cases=chosen)
    return 1 if any(r[3] == "VIOLATED" for r in report) else 0
