"""The trained parameters a worker sends back from a training run (the training lab's and the
transformer lab's `training_run`), checked in the judge before it loads them into the
reference's modules: exactly the contract's names and shapes, floating point, with values and finite."""

import torch


class BadState(Exception):
    """The trained parameters are not the contract's: `key` (messages) and its fields."""

    def __init__(self, key, **fields):
        super().__init__(key)
        self.key, self.fields = key, fields


def checked(want, got, prefix=""):
    """The worker's `got` ({name: tensor}, a dict) checked against the reference's state dict
    `want`: {name: float32 tensor} to load, in `want`'s order. Raises BadState naming the first
    missing, non-floating, misshapen, valueless (meta), non-finite or extra tensor
    (`prefix.name` with a prefix)."""

    def label(name):
        return f"{prefix}.{name}" if prefix else name

    for name, w in want.items():
        g = got.get(name)
        if not isinstance(g, torch.Tensor) or not g.is_floating_point():
            raise BadState("lab_run_state_missing", name=label(name))
        if tuple(g.shape) != tuple(w.shape):
            raise BadState("lab_run_state_shape", name=label(name), got=tuple(g.shape), expected=tuple(w.shape))
        if g.device.type == "meta":  # the wire carries a meta tensor's shape alone: no values to check
            raise BadState("lab_run_state_no_values", name=label(name))
        if not bool(torch.isfinite(g).all()):
            raise BadState("lab_run_state_not_finite", name=label(name))
    extra = sorted(set(got) - set(want), key=str)
    if extra:
        raise BadState("lab_run_state_extra", name=label(extra[0]))
    return {n: got[n].detach().to(torch.float32) for n in want}
