"""In the worker, plots are stand-ins (`autograder.worker.plots`): every plotting cell of
the master notebooks runs without error, and the real matplotlib is never imported."""

import json
import subprocess
import sys

from conftest import ASSIGNMENTS, ROOT

PROBE = """
import json, sys
from autograder.worker import plots
plots.install()
import torch
cells = json.loads(sys.stdin.read())
ns = {"torch": torch}
for src in cells:
    exec(compile(src, "<cell>", "exec"), ns)
import matplotlib.pyplot as plt
fig, axes = plt.subplots(2, 3)
assert len(axes) == 2 and len(axes[0]) == 3 and len(list(axes.flat)) == 6 and axes[1, 2] is axes[1][2]
fig, row = plt.subplots(1, 4)
assert len(row) == 4 and len(row.ravel()) == 4
fig, ax = plt.subplots()
ax.imshow([[1.0]]).set_clim(0, 1)
assert not any("site-packages/matplotlib" in str(getattr(m, "__file__", "")) for m in list(sys.modules.values()))
print("ok", len(cells))
"""


def test_every_plotting_cell_runs_with_the_stand_ins_and_no_real_matplotlib():
    cells = []
    for a in ASSIGNMENTS:
        nb = json.loads((ROOT / "examples" / "submissions" / a / "reference.ipynb").read_text())
        cells += [
            "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in nb["cells"]
            if c["cell_type"] == "code" and "matplotlib" in "".join(c["source"]) and "otter" not in "".join(c["source"])
        ]
    assert len(cells) >= len(ASSIGNMENTS)
    # the graded functions the plotting cells call, from the references
    prelude = "\n".join(f"from autograder.private.solutions.{a} import *" for a in ASSIGNMENTS)
    proc = subprocess.run(
        [sys.executable, "-c", PROBE],
        input=json.dumps([prelude] + cells),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    # a cell may print (the lab's heatmap says there is nothing to draw before training)
    assert proc.returncode == 0 and proc.stdout.splitlines()[-1].startswith("ok"), proc.stderr[-3000:]
