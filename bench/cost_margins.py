"""The margins of the assignments' cost checks: for each chosen assignment whose folder
declares a cost bench (`costs_bench.py` under its private folder, with `run(cfg, seeds)`),
the figures that bench prints (what each measured entry needs, and whether it passes the
grading.yml settings the suites use, seed by seed).

    .venv/bin/python bench/cost_margins.py [--assignment NAME] [--seeds 10] [--curves]

`--curves`: also what the bench measures against the length (`curves()`, where it has one).

An assignment without a cost bench is skipped (a line says so)."""

import argparse
import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import chosen  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(prog="cost_margins", description=__doc__.split("\n\n")[0])
    chosen.add_argument(ap)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument(
        "--curves", action="store_true", help="also time and memory against the length, where the bench has them"
    )
    args = ap.parse_args(argv)
    from autograder import config, declarations

    cfg = config.load()
    for name in chosen.assignments(args, ap.prog):
        try:
            bench = importlib.import_module(f"{declarations.PACKAGE}.{name}.costs_bench")
        except ModuleNotFoundError:
            print(f"{name}: no cost bench")
            continue
        print(f"{name}:")
        bench.run(cfg, args.seeds)
        if args.curves and hasattr(bench, "curves"):
            bench.curves()


if __name__ == "__main__":
    main()
