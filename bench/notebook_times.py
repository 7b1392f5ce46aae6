"""The times the notebooks promise, measured on the reference: each notebook with a
generated time cell (`autograder.build.time_text`) is filled with the reference
solution and run top to bottom in a Jupyter kernel, as a student runs it (so its
training cells train), and the CPU seconds of every code cell are recorded.

CPU time, not wall time: user + system seconds of the kernel process
(`time.process_time`), with torch on one thread (`torch.set_num_threads(1)`, and
OMP_NUM_THREADS=1 for the kernel), so that a machine busy with other work measures
about what a quiet laptop core does. The figures go to `bench/figures/notebook_times.json`
(with `--write`), which the build turns into the notebooks' sentences; a figure of a
different machine moves the promises only when it crosses a rounding boundary.

    python bench/notebook_times.py [--assignment NAME ...] [--write]
"""

import argparse
import copy
import datetime
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autograder import config, layout  # noqa: E402
from autograder.audit.catalog import fill_reference  # noqa: E402
from autograder.build import time_text  # noqa: E402

# The first cell of the measured copy: one thread, and the kernel's CPU time around every
# cell (IPython's events; the cell id is the one nbclient sends with each request).
PREAMBLE = """\
import json as _kit_json, time as _kit_time, torch as _kit_torch
_kit_torch.set_num_threads(1)
_kit_times = []
def _kit_pre(info):
    _kit_times.append([getattr(info, "cell_id", None), _kit_time.process_time()])
def _kit_post(result):
    _kit_times[-1].append(_kit_time.process_time())
get_ipython().events.register("pre_run_cell", _kit_pre)
get_ipython().events.register("post_run_cell", _kit_post)
"""
DUMP = "open({path!r}, 'w').write(_kit_json.dumps(_kit_times))"


def _cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def training_cell(assignment, template):
    """The id, in the student notebook `template`, of the cell the master's `kit-time-training`
    cell describes (the same source: the build copies a hand-written code cell as it is), or None."""
    master = json.loads((layout.COURSE / "assignments" / assignment / f"{assignment}.ipynb").read_text())
    ids = time_text.training_cells(master)
    if not ids:
        return None
    (want,) = ["".join(c["source"]) for c in master["cells"] if c.get("id") in ids]
    found = [c["id"] for c in template["cells"] if c["cell_type"] == "code" and "".join(c["source"]) == want]
    if len(found) != 1:
        raise RuntimeError(f"{assignment}: the training cell is not once in the student notebook (build it first)")
    return found[0]


def measure(assignment, template):
    """{cell id: CPU seconds} of every code cell of the reference notebook, run in a kernel."""
    import nbformat
    from nbclient import NotebookClient

    nb = copy.deepcopy(fill_reference(template, assignment))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "times.json"
        first = nbformat.v4.new_code_cell(PREAMBLE)
        last = nbformat.v4.new_code_cell(DUMP.format(path=str(out)))
        first["id"], last["id"] = "kit-bench-first", "kit-bench-last"
        nb["cells"] = [first, *nb["cells"], last]
        node = nbformat.reads(json.dumps(nb), as_version=4)
        # otter.Notebook("<assignment>.ipynb") looks for the notebook beside it
        nbformat.write(node, Path(tmp) / f"{assignment}.ipynb")
        os.environ.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        client = NotebookClient(node, timeout=3600, kernel_name="python3", resources={"metadata": {"path": tmp}})
        client.execute()
        times = json.loads(out.read_text())
    # nbclient skips empty code cells: they have no figure
    ids = [c.id for c in node.cells if c.cell_type == "code" and c.source.strip()][1:-1]
    # every cell between the preamble (whose own pre hook was not yet registered) and the
    # dump (whose post hook had not yet run when it wrote)
    measured = [t for t in times if len(t) == 3]
    if len(measured) != len(ids) or any(cid not in (None, want) for (cid, _, _), want in zip(measured, ids)):
        raise RuntimeError(f"{assignment}: {len(measured)} cells timed for {len(ids)} code cells")
    return {cid: round(end - start, 1) for cid, (_, start, end) in zip(ids, measured, strict=True)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assignment", action="append", help="only these (default: every one with a time cell)")
    parser.add_argument("--write", action="store_true", help=f"write {time_text.FIGURES.name}")
    args = parser.parse_args(argv)
    names = args.assignment or [a for a in config.load().assignments if time_text.cells(a)]
    figures = time_text.figures(missing_ok=True)
    for a in names:
        start = time.monotonic()
        template = json.loads((layout.COURSE / "student_template" / "en" / f"{a}.ipynb").read_text())
        training = training_cell(a, template)
        cells = measure(a, template)
        wall = time.monotonic() - start
        notebook = round(sum(cells.values()), 1)
        print(f"{a}: the notebook {notebook} s of CPU ({wall:.0f} s of wall, kernel start included)")
        for cid, seconds in cells.items():
            if seconds >= 1:
                print(f"  {cid}: {seconds} s of CPU" + ("  (the training cell)" if cid == training else ""))
        figures["assignments"][a] = {
            "notebook": notebook,
            "cells": {cid: s for cid, s in cells.items() if s >= 1},
            **({"training": cells[training]} if training else {}),
        }
    figures["how"] = (
        "CPU seconds (user + system of the Jupyter kernel, torch on one thread) of the reference "
        "notebook run top to bottom by bench/notebook_times.py; CPU time rather than wall time, "
        "because the machine was busy with other work; 'cells' keeps the code cells of 1 s or more"
    )
    figures["measured"] = {
        "date": datetime.date.today().isoformat(),
        "cpu": _cpu_model(),
        "python": platform.python_version(),
        "torch": __import__("torch").__version__,
    }
    if args.write:
        time_text.FIGURES.parent.mkdir(parents=True, exist_ok=True)
        time_text.FIGURES.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {time_text.FIGURES}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
