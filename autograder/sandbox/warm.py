"""Make torch's first meta-device operations cheap in every worker and judge.

torch wraps each of its Python reference implementations (`torch._refs`: what a
`masked_fill`, `where` or `softmax` runs on the meta device) in
`torch._disable_dynamo`, which on the wrapped function's first call imports
torch._dynamo (about 2 s of CPU here, once per process) only to wrap it in a
"no compiling inside" guard, and caches the guard on the function as
`__dynamo_disable`. Outside `torch.compile` that guard is the function itself.

`without_dynamo()` caches the function itself there for every wrapper that
exists, so the first meta call costs no import. It is only a speed-up: a torch
without these names is left as it is (the import then happens as before), and
a program that compiles with dynamo still can (the references run eagerly
inside a compiled graph instead of being skipped). Called once by a fork
server before it forks (so the workers inherit it) and by the judge.
"""

import gc
import types


def without_dynamo() -> int:
    """Seed every existing `torch._disable_dynamo` wrapper; returns how many (0: nothing done)."""
    try:
        import torch._compile as compile_api

        probe = compile_api._disable_dynamo(lambda: None)
        code = probe.__code__
    except (ImportError, AttributeError, TypeError):
        return 0
    seeded = 0
    for obj in gc.get_objects():
        if type(obj) is not types.FunctionType or obj.__code__ is not code or not obj.__closure__:
            continue
        for cell in obj.__closure__:
            try:
                fn = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            if callable(fn) and getattr(fn, "__dynamo_disable", None) is None:
                try:
                    fn.__dynamo_disable = fn
                    seeded += 1
                except (AttributeError, TypeError):
                    pass
    return seeded


def training() -> None:
    """Import what an optimizer's step imports on its first call: `torch._dynamo` (0.8 s of
    CPU here), which `torch.optim`'s step wrapper imports in every process to mark a graph
    break. A fork server whose workers train (their assignment declares a run) loads it once,
    on the judge's request (`ForkServer.warm_training`), so each worker inherits it; one whose
    workers never train does not pay it (0.5 s more a submission, measured)."""
    try:
        import torch._dynamo  # noqa: F401
    except Exception:  # noqa: BLE001 - only a speed-up
        pass


def symbolic_shapes() -> None:
    """Import what torch's first meta-device reduction (`amax`, so `softmax`) imports:
    `torch.fx.experimental.symbolic_shapes` and sympy (0.4 s), an import only, no
    operation. Every worker's meta-device check needs it: loaded once by its fork
    server, it is shared instead of paid by each worker."""
    try:
        import torch.fx.experimental.symbolic_shapes  # noqa: F401
    except Exception:  # noqa: BLE001 - only a speed-up
        pass
