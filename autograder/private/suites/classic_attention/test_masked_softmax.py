"""Hidden tests: masked_softmax(scores, mask=None, dim=-1)."""
import torch

from autograder.private.suites import checks as c
from autograder.private.solutions import classic_attention as ref

QUESTION = "masked_softmax"
NAME = "masked_softmax"
OUT = ("weights",)
SHAPES = [(3, 5), (4, 4), (2, 3, 7), (2, 2, 3, 6)]


def _hints(mask=None):
    return {"weights": lambda g, e: c.weights_hint(g, e, mask)}


def test_values_and_row_sums(sub, cfg):
    for k, shape in enumerate(SHAPES):
        scores = c.randn(shape, 100 + k, scale=3.0)
        got, _ = c.check_values(sub, cfg, NAME, [scores], {}, ref.masked_softmax, OUT, hints=_hints())
        sums = got["weights"].double().sum(-1)
        c.assert_close(sums, torch.ones_like(sums), f"row sums of {NAME} over dim=-1 for shape {shape}", cfg)


def _dim_hint(dim):
    """A likely cause when the softmax is taken over another axis than `dim`."""
    def h(got, expected):
        g = got.detach().double().cpu()
        if torch.isnan(g).any():
            return None
        for axis in range(g.dim()):
            if axis != dim % g.dim() and torch.allclose(g.sum(axis), torch.ones(()).double(), atol=1e-3):
                return (f"the weights sum to 1 along axis {axis}, not along dim={dim}: the softmax ignores the "
                        "`dim` argument (take the maximum and the sum over `dim`).")
        return None
    return h


def test_dim_argument(sub, cfg):
    scores = c.randn((3, 4, 5), 110, scale=2.0)
    for dim in (0, 1, -2):
        c.check_values(sub, cfg, NAME, [scores], {"dim": dim}, ref.masked_softmax, OUT,
                       hints={"weights": _dim_hint(dim)})


def test_mask_broadcast_and_exact_zeros(sub, cfg):
    for k, (shape, mshape) in enumerate([((3, 6), (3, 6)), ((2, 4, 6), (2, 1, 6)), ((5, 5), (5, 5))]):
        scores = c.randn(shape, 120 + k, scale=2.0)
        mask = c.rand_mask(mshape, 130 + k)
        got, _ = c.check_values(sub, cfg, NAME, [scores], {"mask": mask}, ref.masked_softmax, OUT,
                                hints=_hints(mask))
        leak = got["weights"][~mask.expand(shape)]
        if leak.numel() and leak.abs().max() != 0:
            c.fail(f"{NAME}: {int((leak != 0).sum())} masked positions got non-zero weight (expected exactly 0)")


def test_fully_masked_rows(sub, cfg):
    scores = c.randn((4, 5), 140)
    mask = c.rand_mask((4, 5), 141)
    mask[1] = False
    mask[3] = False
    got, _ = c.check_values(sub, cfg, NAME, [scores], {"mask": mask}, ref.masked_softmax, OUT, hints=_hints(mask))
    w = got["weights"]
    if torch.isnan(w).any() or w[1].abs().max() != 0 or w[3].abs().max() != 0:
        c.fail(f"{NAME}: a row whose keys are all masked must give all-zero weights, never NaN")


def test_stable_for_large_scores(sub, cfg):
    scores = c.randn((3, 6), 150, scale=1e4)
    mask = c.rand_mask((3, 6), 151)
    for kwargs in ({}, {"mask": mask}):
        c.check_values(sub, cfg, NAME, [scores], kwargs, ref.masked_softmax, OUT,
                       hints=_hints(kwargs.get("mask")))


def test_gradients(sub, cfg):
    scores = c.randn((3, 4, 5), 160)
    mask = c.rand_mask((3, 1, 5), 161)
    mask[0] = False
    c.check_grads(sub, cfg, NAME, [scores], {"mask": mask}, ref.masked_softmax, OUT, seed=162)


def test_dtype_and_device(sub, cfg, dd):
    device, dtype = dd
    scores = c.randn((4, 6), 170, scale=2.0)
    mask = c.rand_mask((4, 6), 171)
    c.check_values(sub, cfg, NAME, [scores], {"mask": mask}, ref.masked_softmax, OUT,
                   dtype=dtype, device=device, hints=_hints(mask))


def test_meta_device(sub, cfg):
    scores = c.randn((2, 3, 5), 180)
    mask = c.rand_mask((2, 1, 5), 181)
    c.check_values(sub, cfg, NAME, [scores], {"mask": mask}, ref.masked_softmax, OUT,
                   dtype=torch.float32, device="meta")


def test_inputs_unchanged(sub, cfg):
    scores = c.randn((3, 5), 190)
    mask = c.rand_mask((3, 5), 191)
    c.check_values(sub, cfg, NAME, [scores], {"mask": mask}, ref.masked_softmax, OUT)
    c.check_inputs_unchanged(sub, NAME, [scores], {"mask": mask})


def test_vectorised(sub, cfg):
    """The number of torch operations must not grow with the number of rows."""
    scores = c.randn((3, 5), 195)
    c.check_values(sub, cfg, NAME, [scores], {}, ref.masked_softmax, OUT, hints=_hints())
    pair = []
    for k, rows in enumerate((2, 8)):
        pair.append(([c.randn((rows, 5), 196 + k)], {"mask": c.rand_mask((rows, 5), 198 + k)}))
    c.check_vectorised(sub, NAME, pair[0], pair[1], "the rows")
