"""The cost bench of efficient_attention (`bench/cost_margins.py` runs it): for each seed,
the memory the capped call's inputs need in the reference and the catalog's full-matrix
attention written as blocks (the most bytes of tensors alive at
once, counted in this process), then each run in a worker under the suite's cap
(grading.yml `assignments.efficient_attention.costs.memory`), as test_fits_in_memory calls it;
then test_one_position_per_step's check (the judge answering and watching the decoder's
attention and nn.Linear calls) on the reference decode_step and the catalog's decoder that
recomputes every past position, seed by seed. The reference must pass on every seed, the
full-matrix attention and the recomputing decoder fail on every one."""

import time
import weakref
from pathlib import Path

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from autograder.messages import number, t
from autograder.private.assignments.efficient_attention.test_blocked_attention import ASSIGNMENT
from autograder.private.solutions import efficient_attention as ref

HERE = Path(__file__).resolve().parent


class _Meter(TorchDispatchMode):
    """The bytes of the tensors created while on, and the most alive at once (one count per storage)."""

    def __init__(self):
        super().__init__()
        self.live_bytes = 0
        self.peak = 0
        self.storages = set()

    def _gone(self, ptr, nbytes):
        self.storages.discard(ptr)
        self.live_bytes -= nbytes

    def __torch_dispatch__(self, op, _types, op_args=(), op_kwargs=None):
        result = op(*op_args, **(op_kwargs or {}))
        for x in result if isinstance(result, (tuple, list)) else [result]:
            if isinstance(x, torch.Tensor) and x.untyped_storage().data_ptr() not in self.storages:
                ptr, nbytes = x.untyped_storage().data_ptr(), x.untyped_storage().nbytes()
                self.storages.add(ptr)
                self.live_bytes += nbytes
                self.peak = max(self.peak, self.live_bytes)
                weakref.finalize(x, self._gone, ptr, nbytes)
        return result


def _entries():
    """(label, source) of the capped call's two attentions: the reference and the full-matrix bug."""
    code_ref = "import math\nimport torch\n\n" + _source(ref.blocked_attention)
    return [("reference", code_ref), ("full-matrix bug", _catalog("blocked_full_matrix"))]


def _source(fn):
    import inspect

    return inspect.getsource(fn)


def _catalog(entry):
    """A catalog entry's source."""
    return (HERE / "catalog" / f"{entry}.py").read_text(encoding="utf-8")


def _defined(code, name):
    """`name` as `code` defines it, run where the reference's names (the provided functions) are its globals."""
    ns = dict(vars(ref))
    exec(compile(code, "<entry>", "exec"), ns)  # noqa: S102  the kit's own catalog code, in the bench
    return ns[name]


def run(cfg, seeds):
    from autograder.judge.notebook import Cell, Submission
    from autograder.judge.remote import CallOptions, Remote
    from autograder.sandbox.forkserver import ForkServer
    from autograder.sandbox.limits import Limits

    s = cfg.costs(ASSIGNMENT)["memory"]
    T, d_k, cap = s["length"], s["d_k"], s["cap_mb"]
    kwargs = {"causal": True, "block_size": s["block_size"]}
    scores_mib = number(T * T * 4 / 2**20, ".0f")
    print(t("ea_bench_setting", block_size=s["block_size"], T=T, d_k=d_k, cap=cap, scores=scores_mib))
    server = ForkServer()
    try:
        for label, code in _entries():
            fn = _defined(code, "blocked_attention")
            sub = Submission(Path("bench.ipynb"), {}, [Cell(1, code, code)])
            remote = Remote(sub, "", Limits.from_config(cfg.limits), forkserver=server)
            peaks, verdicts, seconds = [], [], []
            try:
                for seed in range(s["seed"], s["seed"] + seeds):
                    g = torch.Generator().manual_seed(seed)
                    q, k, v = (torch.randn(1, T, d_k, generator=g) for _ in range(3))
                    with _Meter() as meter:
                        start = time.process_time()
                        fn(q, k, v, **kwargs)
                        seconds.append(time.process_time() - start)
                    peaks.append(meter.peak / 2**20)
                    reply = remote.call("blocked_attention", [q, k, v], kwargs, options=CallOptions(memory_mb=cap))
                    verdicts.append("pass" if reply.ok else "FAIL")
            finally:
                remote.close()
            print(
                t(
                    "ea_bench_entry",
                    label=f"{label:>18}",
                    low=number(min(peaks), "7.1f"),
                    high=number(max(peaks), "7.1f"),
                    cpu_low=number(min(seconds), ".2f"),
                    cpu_high=number(max(seconds), ".2f"),
                    verdicts=" ".join(verdicts),
                    n=verdicts.count("pass"),
                    of=len(verdicts),
                )
            )
        _decoders(cfg, seeds, server)
    finally:
        server.close()


def _decoders(cfg, seeds, server):
    """test_one_position_per_step's check on the reference decode_step and the catalog's
    decoder that runs the full forward at every step, seed by seed (the suite's is 80)."""
    from autograder.judge import provided_source
    from autograder.judge.failure import Failure
    from autograder.judge.notebook import Cell, Submission
    from autograder.judge.remote import Remote
    from autograder.private.assignments.efficient_attention import test_decode_step
    from autograder.sandbox.limits import Limits

    recomputing = _catalog("decode_recomputes_past")
    reference = "import torch\n\n" + _source(ref.decode_step)
    print(t("ea_bench_decoder_setting"))
    for label, code in (("reference", reference), ("recomputing decoder", recomputing)):
        sub = Submission(Path("bench.ipynb"), {}, [Cell(1, code, code)])
        remote = Remote(sub, provided_source(ASSIGNMENT), Limits.from_config(cfg.limits), forkserver=server)
        verdicts, seconds = [], []
        try:
            for seed in range(80, 80 + 2 * seeds, 2):  # the case's seed and its answers' (seed + 1)
                start = time.monotonic()
                try:
                    test_decode_step.one_position_per_step(remote, cfg, seed)
                    verdicts.append("pass")
                except Failure:
                    verdicts.append("FAIL")
                seconds.append(time.monotonic() - start)
        finally:
            remote.close()
        print(
            t(
                "ea_bench_decoder",
                label=f"{label:>20}",
                low=number(min(seconds), ".2f"),
                high=number(max(seconds), ".2f"),
                verdicts=" ".join(verdicts),
                n=verdicts.count("pass"),
                of=len(verdicts),
            )
        )


def curves(lengths=(256, 512, 1024, 2048), steps=(8, 16, 32, 64)):
    """Time and memory against the length, this process, one thread: the reference
    blocked_attention (block_size 128), the catalog's full-matrix attention written as
    blocks and the full attention (scaled_dot_product_attention with the causal mask) on
    (1, T, 32) float32, causal (the most MiB of tensors alive at once, the best of 3 wall
    clocks); then greedy generation of n tokens from a 4-token prompt by a
    TransformerLM(50, 64, 4, 128, 2), with the reference decode_step and with the catalog's
    recomputing decoder (the best of 3)."""
    torch.set_num_threads(1)
    full_matrix = _defined(_catalog("blocked_full_matrix"), "blocked_attention")

    def full(q, k, v):
        return ref.scaled_dot_product_attention(q, k, v, ref.causal_mask(q.shape[-2]))[0]

    attentions = (
        ("reference", lambda q, k, v: ref.blocked_attention(q, k, v, causal=True, block_size=128)),
        ("full-matrix bug", lambda q, k, v: full_matrix(q, k, v, causal=True, block_size=128)),
        ("full attention", full),
    )
    for label, fn in attentions:
        row = []
        for T in lengths:
            g = torch.Generator().manual_seed(T)
            q, k, v = (torch.randn(1, T, 32, generator=g) for _ in range(3))
            with torch.no_grad(), _Meter() as meter:
                fn(q, k, v)
            row.append(
                t(
                    "ea_curve_point",
                    T=T,
                    mib=number(meter.peak / 2**20, ".2f"),
                    ms=number(1000 * _best(lambda: fn(q, k, v)), ".1f"),
                )
            )
        print(t("ea_curve", label=f"{label:>16}", points="; ".join(row)))
    torch.manual_seed(0)
    lm = ref.TransformerLM(50, 64, 4, 128, 2).eval()
    prompt = torch.randint(0, 50, (1, 4))
    recomputing = _defined(_catalog("decode_recomputes_past"), "decode_step")
    for label, step in (("reference", ref.decode_step), ("recomputing", recomputing)):
        row = []
        for n in steps:
            with torch.no_grad():
                row.append(
                    t("ea_curve_tokens", n=n, ms=number(1000 * _best(lambda: _generate(lm, prompt, n, step)), ".1f"))
                )
        print(t("ea_curve", label=f"{label:>16}", points="; ".join(row)))


def _generate(model, prompt, n, step):
    cache, logits = None, None
    for i in range(prompt.shape[1]):
        logits, cache = step(model, prompt[:, i], cache)
    for _ in range(n):
        logits, cache = step(model, logits.argmax(-1), cache)


def _best(fn, repeat=3):
    """The least of `repeat` wall clocks of fn()."""
    return min(_clocked(fn) for _ in range(repeat))


def _clocked(fn):
    began = time.perf_counter()
    fn()
    return time.perf_counter() - began
