"""A notebook's own public checks as the judge reads them: the tests otter put in its
metadata (or a `tests/` folder beside it) and the rows of what the worker ran. Used by
`check` (a student's self-check) and by the judge (the public checks a question shows)."""

from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder.judge.form_causes import public_costs
from autograder.messages import t

if TYPE_CHECKING:
    from autograder.judge.notebook import Submission


def public_tests(nb: dict[str, Any], path: str | Path | None = None) -> list[dict[str, str]]:
    """[{"name": question, "source": test file text}] in notebook order; where the metadata has
    none, the files of a `tests/` folder beside `path` (None: the metadata only)."""
    meta: dict[str, Any] = nb["metadata"] if isinstance(nb.get("metadata"), dict) else {}
    otter_meta: dict[str, Any] = meta["otter"] if isinstance(meta.get("otter"), dict) else {}
    tests: dict[str, Any] = otter_meta["tests"] if isinstance(otter_meta.get("tests"), dict) else {}
    found = []
    for name, spec in tests.items():
        source = spec if isinstance(spec, str) else (spec or {}).get("src") or (spec or {}).get("source")
        if isinstance(source, str):
            found.append({"name": name, "source": source})
    folder = Path(path).parent / "tests" if path is not None else None
    if not found and folder is not None and folder.is_dir():
        found = [{"name": f.stem, "source": f.read_text()} for f in sorted(folder.glob("*.py"))]
    return found


Row = tuple[str, bool, int, int, list[tuple[str, str]]]


def report(results: object, sub: "Submission | None" = None) -> list[Row]:
    """[(question, passed, ran, total, [(case, one-line error)])] from the worker's results. A
    question that the notebook's form costs (`sub`'s form findings and typed answers, read by
    the reader) fails first with the grade's words, whatever its cases did: the self-check says
    what the grade will (`form_causes.public_costs`)."""
    rows: list[Row] = []
    for r in results if isinstance(results, list) else []:
        if not isinstance(r, dict):
            continue
        cases = [c for c in r.get("cases", []) if isinstance(c, dict)]
        bad = [(str(c.get("name")), c.get("error") or {}) for c in cases if not c.get("ok")]
        if r.get("error"):
            bad.append((t("check_test_file"), r["error"]))
        errors = [
            (
                name,
                f"{(e or {}).get('type', 'Error')}: {(e or {}).get('message', '')}" if isinstance(e, dict) else str(e),
            )
            for name, e in bad
        ]
        passed_cases = len(cases) - len([b for b in bad if b[0] != t("check_test_file")])
        rows.append((str(r.get("name")), bool(cases) and not bad, passed_cases, len(cases), errors))
    costs = public_costs(sub, [row[0] for row in rows]) if sub is not None else {}
    out: list[Row] = []
    for q, ok, ran, total, errors in rows:
        said = [(t("form_case"), c) for c in costs.get(q, []) if not any(c in e for _, e in errors)]
        out.append((q, ok and not costs.get(q), ran, total, said + errors))
    return out
