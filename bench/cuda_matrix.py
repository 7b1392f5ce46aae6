"""The hidden-suite matrix per device and dtype, for the GPU machine.

    PYTHONPATH=. python bench/cuda_matrix.py [--examples reference,sdpa_scaled_by_dk,...]

Runs from source on whatever torch it finds: needs torch, pytest and PyYAML,
not otter or Jupyter (the example notebooks are read as JSON and run in the
kit's worker). Grades the reference and a few buggy example submissions of
every assignment with the hidden suites, on every device of grading.yml that
is present (CUDA in float32, float16 and bfloat16 where there is a GPU), and
prints, per submission and per device/dtype case, how many parametrised test
cases passed: the reference must pass everything, each bug must fail on its
questions. Exit status 1 when the reference fails any case.
"""

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT = ["reference", "sdpa_scaled_by_dk", "causal_mask_triu", "mha_no_out_proj", "softmax_no_max_subtraction"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", default=",".join(DEFAULT))
    args = ap.parse_args()
    import torch

    from autograder import config
    from autograder.audit import examples as examples_mod
    from autograder.judge import grade

    cfg = config.load()
    wanted = args.examples.split(",")
    print(
        f"torch {torch.__version__}, CUDA {'available: ' + torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'not available'}"
    )
    start = time.monotonic()
    failures = 0
    for a in cfg.assignments:
        for name in wanted:
            path = examples_mod.EXAMPLES / a / f"{name}.ipynb"
            if not path.exists():
                continue
            t0 = time.monotonic()
            result = grade(path, a, cfg)
            by_case = {}
            for o in result.outcomes:
                key = o.case if o.case.split("-")[0] in ("cpu", "cuda", "meta") else "all"
                ok, total = by_case.get(key, (0, 0))
                by_case[key] = (ok + o.passed, total + 1)
            cells = "  ".join(f"{k}: {ok}/{n}" for k, (ok, n) in sorted(by_case.items()))
            print(f"{a}/{name:<28} {result.score:6.2f}/{result.max_score:<4g} {time.monotonic() - t0:5.1f}s  {cells}")
            if name == "reference" and any(not o.passed for o in result.outcomes):
                failures += 1
                for o in result.outcomes:
                    if not o.passed:
                        print(f"    FAIL {o.question} {o.test}[{o.case}]: {o.message[:300]}")
            if getattr(result, "internal_errors", None):
                print("    internal errors:", *result.internal_errors[:3], sep="\n      ")
    print(f"total {time.monotonic() - start:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
