"""The trusted source check for torch's built-in attention."""
import pytest

from autograder.notebook import Cell
from autograder.sourcecheck import forbidden_uses


def cells(*sources):
    return [Cell(i + 1, s, s) for i, s in enumerate(sources)]


@pytest.mark.parametrize("source", [
    "import torch.nn.functional as F\ndef sdpa(q, k, v, mask=None):\n    return F.scaled_dot_product_attention(q, k, v), None",
    "import torch\ndef sdpa(q, k, v, mask=None):\n    return torch.nn.functional.scaled_dot_product_attention(q, k, v), None",
    "from torch.nn.functional import scaled_dot_product_attention as f\ndef sdpa(q, k, v, mask=None):\n    return f(q, k, v), None",
    "import torch.nn.functional as F\ndef sdpa(q, k, v, mask=None):\n    return getattr(F, 'scaled_dot_product_attention')(q, k, v), None",
    "import torch\ndef helper(q):\n    return torch.nn.MultiheadAttention(4, 2)\ndef sdpa(q, k, v, mask=None):\n    return helper(q)",
])
def test_forbidden_uses_found(source):
    assert forbidden_uses(cells(source), "sdpa"), source


def test_clean_function_and_other_cells_pass():
    found = forbidden_uses(cells(
        "import torch\ndef sdpa(q, k, v, mask=None):\n    \"\"\"Unlike scaled_dot_product_attention...\"\"\"\n    return q @ k.T @ v, None",
        "import torch.nn.functional as F\n# a demo cell may compare with the built-in\nF.scaled_dot_product_attention",
    ), "sdpa")
    assert found == []


def test_provided_function_with_the_builtin_name_is_allowed():
    src = "class MultiHeadAttention:\n    def forward(self, q, k, v):\n        return scaled_dot_product_attention(q, k, v)"
    assert forbidden_uses(cells(src), "MultiHeadAttention", provided=("scaled_dot_product_attention",)) == []
    assert forbidden_uses(cells(src), "MultiHeadAttention") != []
