"""What a memory cap on one call costs and where it falls (`CallOptions(memory_mb=...)`): prints
a bare worker's data size and control-group charge (what a cap is counted from), the wall time
of a plain call, of a capped one and of the call after it (a fresh worker: the notebook loaded
again), and, for a (T, T) float32 tensor allocated in the call, which T pass under each cap.

    .venv/bin/python bench/memory_cap.py [--caps 128 256 512] [--sizes 2048 4096 8192 16384] [--runs 3]

Wall times are the machine's (shared machines distort them: compare on one quiet box)."""

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CODE = "import torch\n\ndef allocate(n):\n    return torch.ones(n, n).sum()\n"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="memory_cap", description=__doc__.split("\n\n")[0])
    ap.add_argument("--caps", type=int, nargs="+", default=[128, 256, 512], metavar="MB")
    ap.add_argument("--sizes", type=int, nargs="+", default=[2048, 4096, 8192, 16384], metavar="T")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)

    from autograder import config
    from autograder.judge.notebook import Cell, Submission
    from autograder.judge.remote import CallOptions, Remote
    from autograder.sandbox.forkserver import ForkServer
    from autograder.sandbox.limits import Limits

    server = ForkServer()
    sub = Submission(Path("bench.ipynb"), {}, [Cell(1, CODE, CODE)])
    remote = Remote(sub, "", Limits.from_config(config.load().limits), forkserver=server)
    try:
        remote.call("allocate", [8])  # the fork server's start and the first load, not measured

        def timed(options):
            start = time.monotonic()
            reply = remote.call("allocate", [1024], options=options)
            assert reply.ok, reply.error
            return time.monotonic() - start

        plain, capped, after = [], [], []
        for _ in range(args.runs):
            plain.append(timed(CallOptions()))
            capped.append(timed(CallOptions(memory_mb=max(args.caps))))
            after.append(timed(CallOptions()))
        data, group = remote._bare
        print(
            f"bare worker: data {data / 2**20:.0f} MB, control group {'-' if group is None else f'{group / 2**20:.0f} MB'}"
        )
        for label, xs in (("plain call", plain), ("capped call", capped), ("call after a capped one", after)):
            print(f"{label:>24}: median {statistics.median(xs) * 1000:.0f} ms over {len(xs)} runs (wall)")
        print(f"\n(T, T) float32 allocated in the call, by cap (MB): {' '.join(str(c) for c in args.caps)}")
        for n in args.sizes:
            row = []
            for cap in args.caps:
                reply = remote.call("allocate", [n], options=CallOptions(memory_mb=cap))
                row.append("pass" if reply.ok else "FAIL")
            print(f"T={n:>6} ({n * n * 4 / 2**20:>6.0f} MB): {'  '.join(row)}")
    finally:
        remote.close()
        server.close()


if __name__ == "__main__":
    main()
