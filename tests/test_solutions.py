"""The reference solutions against the contract's worked examples and torch's built-ins."""

import pytest
import torch
import torch.nn.functional as F

from autograder.private.solutions import classic_attention as ca
from autograder.private.solutions import multi_head as mh
from autograder.private.solutions import scaled_dot_product as sdp

torch.manual_seed(0)


def test_luong_dot_worked_example():
    H = torch.tensor([[[1.0, 0.0, 0.2], [0.5, 0.5, 0.1], [0.1, 0.9, 0.3]]])
    s = torch.tensor([[0.9, 0.1, 0.2]])
    _, w = ca.dot_attention(s, H)
    assert torch.allclose(w, torch.tensor([[0.464, 0.305, 0.231]]), atol=5e-4)


def test_sdpa_worked_example():
    out, w = sdp.scaled_dot_product_attention(
        torch.tensor([[2.0]]), torch.tensor([[2.0], [1.0]]), torch.tensor([[10.0], [4.0]])
    )
    assert torch.allclose(w, torch.tensor([[0.8808, 0.1192]]), atol=1e-4)
    assert abs(float(out) - 9.2848) < 1e-4


@pytest.mark.parametrize(
    "shape_q,shape_k,d_v", [((2, 5, 4), (2, 7, 4), 3), ((2, 3, 5, 8), (2, 3, 6, 8), 2), ((4, 4), (4, 4), 4)]
)
def test_sdpa_matches_torch(shape_q, shape_k, d_v):
    q = torch.randn(shape_q, dtype=torch.float64)
    k = torch.randn(shape_k, dtype=torch.float64)
    v = torch.randn(*shape_k[:-1], d_v, dtype=torch.float64)
    mask = torch.rand(*shape_q[:-1], shape_k[-2]) < 0.7
    mask[..., 0] = True
    for m in (None, mask):
        out, w = sdp.scaled_dot_product_attention(q, k, v, m)
        assert torch.allclose(out, F.scaled_dot_product_attention(q, k, v, attn_mask=m), atol=1e-10)
        assert torch.allclose(w.sum(-1), torch.ones(w.shape[:-1], dtype=w.dtype))


def test_fully_masked_rows_are_zero_not_nan():
    q, k, v = (torch.randn(2, 3, 4, requires_grad=True) for _ in range(3))
    mask = torch.ones(2, 3, 3, dtype=torch.bool)
    mask[1, 2] = False
    out, w = sdp.scaled_dot_product_attention(q, k, v, mask)
    assert not out.isnan().any() and out[1, 2].abs().max() == 0 and w[1, 2].abs().max() == 0
    out.sum().backward()
    assert not any(t.grad.isnan().any() for t in (q, k, v))


def test_masks():
    assert torch.equal(sdp.causal_mask(3), torch.tensor([[1, 0, 0], [1, 1, 0], [1, 1, 1]], dtype=torch.bool))
    m = sdp.padding_mask(torch.tensor([3, 1]), max_len=4)
    assert torch.equal(m, torch.tensor([[1, 1, 1, 0], [1, 0, 0, 0]], dtype=torch.bool))
    assert sdp.padding_mask(torch.tensor([2, 5])).shape == (2, 5)


@pytest.mark.parametrize("bias", [True, False])
def test_mha_matches_torch_including_cross_attention(bias):
    D, h, B, T_q, T_k = 12, 3, 2, 4, 6
    mine = mh.MultiHeadAttention(D, h, bias=bias).double()
    ref = torch.nn.MultiheadAttention(D, h, bias=bias, batch_first=True).double()
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([mine.q_proj.weight, mine.k_proj.weight, mine.v_proj.weight]))
        ref.out_proj.weight.copy_(mine.out_proj.weight)
        if bias:
            ref.in_proj_bias.copy_(torch.cat([mine.q_proj.bias, mine.k_proj.bias, mine.v_proj.bias]))
            ref.out_proj.bias.copy_(mine.out_proj.bias)
    q = torch.randn(B, T_q, D, dtype=torch.float64)
    kv = torch.randn(B, T_k, D, dtype=torch.float64)
    keep = torch.tensor([[True] * T_k, [True] * 3 + [False] * (T_k - 3)])
    out, w = mine(q, kv, kv, keep[:, None, None, :])
    ref_out, ref_w = ref(q, kv, kv, key_padding_mask=~keep, average_attn_weights=False)  # opposite polarity
    assert torch.allclose(out, ref_out, atol=1e-10) and torch.allclose(w, ref_w, atol=1e-10)
    assert w.shape == (B, h, T_q, T_k)


def test_split_merge_inverse_and_errors():
    x = torch.randn(2, 5, 12)
    assert torch.equal(mh.merge_heads(mh.split_heads(x, 3)), x)
    assert torch.equal(mh.split_heads(x, 3)[:, 1], x[..., 4:8])
    with pytest.raises(ValueError):
        mh.split_heads(x, 5)
    with pytest.raises(ValueError):
        mh.MultiHeadAttention(10, 3)
    with pytest.raises(ValueError):
        ca.dot_attention(torch.randn(2, 3), torch.randn(2, 4, 5))


@pytest.mark.parametrize("B,T,d_s,d_h,n", [(3, 5, 4, 6, 3), (4, 6, 3, 8, 4), (2, 4, 5, 6, 6)])
def test_multi_head_general_is_general_attention_per_group(B, T, d_s, d_h, n):
    """Head k is general_attention on the k-th group of d_h (and W's k-th column block);
    the context is the heads' contexts side by side; one head is general_attention itself."""
    s, H, W = (
        torch.randn(B, d_s, dtype=torch.float64),
        torch.randn(B, T, d_h, dtype=torch.float64),
        torch.randn(d_s, d_h, dtype=torch.float64),
    )
    mask = torch.rand(B, T) < 0.7
    mask[0] = False  # a batch row with no real token
    context, weights = mh.multi_head_general_attention(s, H, W, n, mask)
    assert context.shape == (B, d_h) and weights.shape == (B, n, T)
    d = d_h // n
    for k in range(n):
        c_k, w_k = ca.general_attention(s, H[..., k * d : (k + 1) * d], W[:, k * d : (k + 1) * d], mask)
        assert torch.allclose(weights[:, k], w_k, atol=1e-12) and torch.allclose(context[:, k * d : (k + 1) * d], c_k)
    assert weights[0].abs().max() == 0 and context[0].abs().max() == 0
    one_c, one_w = mh.multi_head_general_attention(s, H, W, 1, mask)
    ref_c, ref_w = ca.general_attention(s, H, W, mask)
    assert torch.allclose(one_c, ref_c, atol=1e-12) and torch.allclose(one_w[:, 0], ref_w, atol=1e-12)
    # the heads' scores add up to the one-head score (the per-head split of one bilinear form)
    whole = torch.einsum("bs,sd,btd->bt", s, W, H)
    split = sum(
        torch.einsum("bs,sd,btd->bt", s, W[:, k * d : (k + 1) * d], H[..., k * d : (k + 1) * d]) for k in range(n)
    )
    assert torch.allclose(whole, split)


@pytest.mark.parametrize("n", [4, 0, -2])
def test_multi_head_general_value_error(n):
    with pytest.raises(ValueError):
        mh.multi_head_general_attention(torch.randn(2, 3), torch.randn(2, 4, 6), torch.randn(3, 6), n)
