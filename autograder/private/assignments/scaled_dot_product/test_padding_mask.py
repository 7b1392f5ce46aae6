"""Hidden tests: padding_mask(lengths, max_len=None)."""

import pytest
import torch

from autograder.judge.failure import Msg
from autograder.judge.remote import CallOptions
from autograder.messages import t
from autograder.private.assignments.scaled_dot_product.common import check_mask
from autograder.private.solutions import scaled_dot_product as ref
from autograder.private.suites import calls, properties, tensors

QUESTION = "padding_mask"
NAME = "padding_mask"
# (lengths, max_len): B != max_len; B == max_len; a zero length; B == 1.
DEFAULT = [[3, 1, 4], [4, 2, 1, 3], [5, 0, 2, 5, 1], [2]]
EXPLICIT = [([3, 1, 4], 6), ([2, 2], 2), ([0, 3, 1], 7)]


def _lengths(values, dtype=torch.int64):
    return torch.tensor(values, dtype=dtype)


def _variants(lengths, max_len):
    pos = torch.arange(max_len).unsqueeze(0)
    n = lengths.cpu().long().unsqueeze(1)
    return [
        (Msg("cause_padding_transposed"), (pos < n).T),
        (Msg("cause_padding_off_by_one"), pos <= n),
        (Msg("cause_padding_inverted"), pos >= n),
        (Msg("cause_padding_inverted_off_by_one"), pos > n),
        (Msg("cause_padding_all_true"), torch.ones(n.shape[0], max_len, dtype=torch.bool)),
    ]


def _check(sub, lengths, max_len=None, device="cpu"):
    args = [lengths] if max_len is None else [lengths, max_len]
    expected = ref.padding_mask(*args)
    send = tensors.as_meta(args) if device == "meta" else tensors.to(args, device)
    what = calls.describe_call(NAME, send) + ("" if device == "cpu" else t("with_lengths_on", device=device))
    reply = sub.call(NAME, send, options=CallOptions(device=device))
    if not reply.ok:
        cause = None
        if "device" in reply.error:
            cause = Msg("cause_padding_arange_device")
        elif device == "meta" and "meta" in reply.error:
            cause = Msg("cause_padding_meta_values")
        calls.call_failed(what, reply.error, cause)
    check_mask(
        reply.value,
        expected,
        what,
        device,
        _variants(lengths, expected.shape[1]),
        shape_hint=_shape_hint(lengths, max_len),
    )
    return reply


def _shape_hint(lengths, max_len):
    """A likely cause for a mask of the wrong size."""

    def h(got, want):
        longest = int(lengths.cpu().max()) if lengths.numel() else 0
        if max_len is not None and max_len != longest and tuple(got) == (want[0], longest):
            return Msg("cause_max_len_ignored", longest=longest, max_len=max_len)
        return None

    return h


def test_default_max_len(sub):
    """max_len defaults to lengths.max(); several B, B == max_len, a zero length, int32 lengths."""
    for values in DEFAULT:
        _check(sub, _lengths(values))
    _check(sub, _lengths([3, 1, 4], torch.int32))


def test_explicit_max_len(sub):
    for values, max_len in EXPLICIT:
        _check(sub, _lengths(values), max_len)


@pytest.mark.property
def test_on_lengths_device(sub, device):
    """The mask is built on lengths.device (meta: with max_len given; shapes only)."""
    _check(sub, _lengths([2, 4]), 6, device=device)


@pytest.mark.property
def test_inputs_unchanged(sub):
    lengths = _lengths([3, 1, 4, 2])
    calls.tensor(calls.call(sub, NAME, [lengths]).value, NAME)  # it returns a mask (its values: the values checks)
    properties.check_inputs_unchanged(sub, NAME, [lengths])


@pytest.mark.property
def test_vectorised(sub):
    calls.tensor(calls.call(sub, NAME, [_lengths([3, 1, 4])]).value, NAME)  # it runs (its values: the values checks)
    lengths = [3, 1, 4, 2, 5, 1, 2]
    properties.check_vectorised(sub, NAME, lambda b: ([_lengths(lengths[:b])], {}), (2, 4, 7), "batch")
