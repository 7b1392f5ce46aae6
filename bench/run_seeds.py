"""An assignment's run in the grader, measured on its reference over seeds.

Each lab that trains in the grader declares its run (`run.py` in its folder, grading.yml
`assignments.<name>.run`) and how it is measured (`run_seeds.py` beside it:
`autograder.declarations.run_seeds`): the figures it prints per seed, the worst margin to
each threshold, the CPU seconds. This bench picks the assignments and the seeds; each
run's own options follow (`--help` with one `--assignment` lists them).

    OMP_NUM_THREADS=1 python bench/run_seeds.py --assignment NAME [--seeds 10] [--first 0] [its options]

Without `--assignment`, every assignment that declares one, each with grading.yml's settings.
Exit status 1 when a run's thresholds fail on a seed (as each run decides).
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import chosen  # noqa: E402

from autograder import config, declarations  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0], add_help=False)
    chosen.add_argument(p)
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--first", type=int, default=0, help="the first seed (default 0)")
    args, rest = p.parse_known_args(argv)
    names = [n for n in chosen.assignments(args, "run_seeds") if declarations.run_seeds(n) is not None]
    if args.assignment and len(names) < len(args.assignment):
        raise SystemExit(
            f"run_seeds: {', '.join(sorted(set(args.assignment) - set(names)))} declares no run over seeds"
        )
    if not names:
        raise SystemExit("run_seeds: no assignment declares a run over seeds")
    if len(names) > 1 and set(rest) - {"-h", "--help"}:
        raise SystemExit(f"run_seeds: a run's own options need one --assignment: {' '.join(rest)}")
    cfg = config.load()
    status = 0
    for name in names:
        run = declarations.run_seeds(name)
        own = argparse.ArgumentParser(prog=f"run_seeds.py --assignment {name}", parents=[p])
        run.add_options(own)
        status |= run.main(own.parse_args(argv), cfg)
    return status


if __name__ == "__main__":
    sys.exit(main())
