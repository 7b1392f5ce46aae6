"""The trusted source check for torch's built-in attention."""

import pytest

from autograder.judge.notebook import Cell
from autograder.judge.sourcecheck import forbidden_uses


def cells(*sources):
    return [Cell(i + 1, s, s) for i, s in enumerate(sources)]


@pytest.mark.parametrize(
    "source",
    [
        "import torch.nn.functional as F\ndef sdpa(q, k, v, mask=None):\n    return F.scaled_dot_product_attention(q, k, v), None",
        "import torch\ndef sdpa(q, k, v, mask=None):\n    return torch.nn.functional.scaled_dot_product_attention(q, k, v), None",
        "from torch.nn.functional import scaled_dot_product_attention as f\ndef sdpa(q, k, v, mask=None):\n    return f(q, k, v), None",
        "import torch.nn.functional as F\ndef sdpa(q, k, v, mask=None):\n    return getattr(F, 'scaled_dot_product_attention')(q, k, v), None",
        "import torch\ndef helper(q):\n    return torch.nn.MultiheadAttention(4, 2)\ndef sdpa(q, k, v, mask=None):\n    return helper(q)",
    ],
)
def test_forbidden_uses_found(source):
    assert forbidden_uses(cells(source), "sdpa"), source


def test_clean_function_and_other_cells_pass():
    found = forbidden_uses(
        cells(
            'import torch\ndef sdpa(q, k, v, mask=None):\n    """Unlike scaled_dot_product_attention..."""\n    return q @ k.T @ v, None',
            "import torch.nn.functional as F\n# a demo cell may compare with the built-in\nF.scaled_dot_product_attention",
        ),
        "sdpa",
    )
    assert found == []


def test_provided_function_with_the_builtin_name_is_allowed():
    src = "class MultiHeadAttention:\n    def forward(self, q, k, v):\n        return scaled_dot_product_attention(q, k, v)"
    assert forbidden_uses(cells(src), "MultiHeadAttention", provided=("scaled_dot_product_attention",)) == []
    assert forbidden_uses(cells(src), "MultiHeadAttention") != []


@pytest.mark.parametrize(
    "source",
    [
        "import torch\nwith torch._C.DisableTorchFunction():\n    pass",
        "from torch._C import DisableTorchFunction",
        "from torch.overrides import TorchFunctionMode",
        "import torch\nclass T(torch.Tensor):\n    @classmethod\n    def __torch_function__(cls, f, t, a=(), k=None):\n        return f(*a)",
        "import torch\noff = getattr(torch, '_C')",
        "import sys\nsys.setprofile(None)",
    ],
)
def test_tracing_tampering_found(source):
    from autograder.judge.sourcecheck import tracing_tampering

    assert tracing_tampering(cells(source)), source


def test_reference_notebooks_do_not_touch_tracing():
    """No false alarm on the references: every solution module's source, as cells."""
    import importlib
    import inspect

    from autograder.judge.sourcecheck import tracing_tampering
    from conftest import ASSIGNMENTS

    for module in [importlib.import_module(f"autograder.private.solutions.{a}") for a in ASSIGNMENTS]:
        assert tracing_tampering(cells(inspect.getsource(module))) == [], module.__name__
