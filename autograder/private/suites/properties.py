"""Checks of a property other than the values: inputs left unchanged, operation counts
that do not grow with a size (vectorised), no torch built-in attention (from scratch),
a ValueError for sizes that do not fit.
"""

import re

import torch

from autograder.judge.failure import Msg
from autograder.judge.remote import CallOptions, cell_label
from autograder.messages import t
from autograder.private.suites import calls, causes, failing
from autograder.protocol import wire

# What the notebook reader's source checks found (`sub.submission.findings`, in
# English): (its words, the catalog key that says them in the language in force).
SOURCE_FINDINGS = [
    (re.compile(r"cell (?P<cell>\d+), line (?P<line>\S+): uses torch's built-in `(?P<name>[^`]+)`"), "finding_builtin"),
    (re.compile(r"cell (?P<cell>\d+), line (?P<line>\S+): looks up `(?P<name>[^`]+)` by name"), "finding_lookup"),
    (
        re.compile(r"cell (?P<cell>\d+), line (?P<line>\S+): uses torch's tracing internals \(`(?P<name>[^`]+)`\)"),
        "finding_tracing",
    ),
    (
        re.compile(
            r"cell (?P<cell>\d+), line (?P<line>\S+): reaches for the grader's own modules \(`(?P<name>[^`]+)`\)"
        ),
        "finding_kit",
    ),
    (
        re.compile(
            r"cell (?P<cell>\d+): could not be parsed to check it \((?P<why>.*)\), and it names `(?P<name>[^`]+)`"
        ),
        "finding_unparsed_names",
    ),
    (
        re.compile(
            r"cell (?P<cell>\d+): could not be parsed to check it \((?P<why>.*)\), and uses torch's tracing "
            r"internals \(`(?P<name>[^`]+)`\)"
        ),
        "finding_unparsed_tracing",
    ),
    (
        re.compile(
            r"cell (?P<cell>\d+): could not be parsed to check it \((?P<why>.*)\), and reaches for the grader's "
            r"own modules \(`(?P<name>[^`]+)`\)"
        ),
        "finding_unparsed_kit",
    ),
]


def finding_text(finding, cells=()):
    """A source check's finding in the language in force (one it does not know: as it is), its
    cell named as the student sees it among the submission's `cells` (`remote.cell_label`:
    the prompt and the first line)."""
    labels = {c.index: getattr(c, "label", None) for c in cells}
    for pattern, key in SOURCE_FINDINGS:
        m = pattern.fullmatch(str(finding))
        if m:
            index = int(m["cell"])
            return t(key, **{**m.groupdict(), "cell": cell_label(labels.get(index), index)})
    return str(finding)


def _same_tensor(sent, back):
    """Whether `back` (rebuilt from the worker's bytes) is `sent`, bit for bit
    (meta tensors: shape and dtype only). Decided here, in the judge."""
    if not isinstance(back, torch.Tensor) or back.dtype != sent.dtype or tuple(back.shape) != tuple(sent.shape):
        return False
    if sent.device.type == "meta" or back.device.type == "meta":
        return True
    return wire.tensor_bytes(back) == wire.tensor_bytes(sent)


def check_inputs_unchanged(sub, name, args, kwargs=None, **opts):
    reply = calls.call(sub, name, args, kwargs, return_inputs=True, **opts)
    flat = wire.flat_tensors([list(args), list((kwargs or {}).values())])
    after = reply.inputs_after
    if not isinstance(after, list) or len(after) != len(flat):
        failing.fail(t("inputs_not_sent_back", what=calls.describe_call(name, args, kwargs), n=len(flat)))
    for i, (sent, back) in enumerate(zip(flat, after)):
        if not _same_tensor(sent, back):
            failing.fail(
                failing.caused(
                    t(
                        "input_changed",
                        what=calls.describe_call(name, args, kwargs),
                        i=i + 1,
                        shape=tuple(flat[i].shape) if i < len(flat) else "?",
                    ),
                    causes.in_place(),
                )
            )
    return reply


def growth(what_grows):
    """(what grew, what a Python loop runs over) in the language in force, for
    one of the sizes a vectorised check grows (GROWS)."""
    return {
        "batch": (t("grows_batch"), t("loop_over_batch")),
        "sequence_length": (t("grows_sequence_length"), t("loop_over_sequence_length")),
        "query_length": (t("grows_query_length"), t("loop_over_query_length")),
        "rows": (t("grows_rows"), t("loop_over_rows")),
        "heads": (t("grows_heads"), t("loop_over_heads")),
    }[what_grows]


GROWS = ("batch", "sequence_length", "query_length", "rows", "heads")


def ops_grew(name, counts, what_grows, cause_key="cause_python_loop"):
    """Fail: the count of torch operations grew with `what_grows` (one of GROWS)."""
    grew, over = growth(what_grows)
    failing.fail(
        failing.caused(t("ops_grew", name=name, small=counts[0], large=counts[1], grew=grew), Msg(cause_key, over=over))
    )


def ops_grow(name, count, sizes, what_grows, cause_key="cause_python_loop"):
    """Fail where the count of torch operations grows with `what_grows` (one of GROWS):
    `count(size)` the count of one call at each of `sizes` (three or more, increasing;
    None: no count came back). A Python loop over the size adds operations at every
    step; a branch on it (one extra operation past a size, as when T_q > T_k) adds them
    once: only a count that grows at every step is a loop."""
    if len(sizes) < 3 or list(sizes) != sorted(set(sizes)):
        raise ValueError(sizes)  # the kit's own misuse: three or more increasing sizes
    counts = [count(size) for size in sizes]
    if any(n is None for n in counts):
        failing.fail(t("no_op_count", name=name))
    if all(b > a for a, b in zip(counts, counts[1:])):
        ops_grew(name, (counts[0], counts[-1]), what_grows, cause_key)


def check_vectorised(sub, name, make, sizes, what_grows, **opts):
    """The number of torch calls must not grow with batch size, length or heads:
    `make(size)` the (args, kwargs) of a call at each of `sizes` of `what_grows` (one of
    GROWS: "batch", "heads", ...), everything else the same (`ops_grow`)."""
    no_tracing_tampering(sub, name)
    ops_grow(name, lambda size: calls.call(sub, name, *make(size), trace=True, **opts).op_count, sizes, what_grows)


def no_tracing_tampering(sub, name):
    """The operation counter runs in the student's process: code that reaches
    for torch's tracing internals (or the kit's own modules) could switch it
    off, so it fails the checks that rely on it (judged on the source, by the
    notebook reader: `sub.submission.findings`)."""
    findings = getattr(sub.submission, "findings", None)
    if not isinstance(findings, dict):
        failing.fail(t("source_checks_missing", name=name))
    found = findings.get("tracing") or []
    if found:
        failing.fail(
            failing.caused(
                t("tracing_tampered", name=name, finding=finding_text(found[0], sub.submission.cells)),
                Msg("cause_tracing"),
            )
        )


def check_from_scratch(sub, cells, provided, name, args, kwargs=None, **opts):
    """No torch built-in attention in the student's code: judged on the source
    (parsed by the notebook reader: `sub.submission.findings`; a provided
    function of a built-in's name excuses that name) and on the calls traced
    while it ran."""
    no_tracing_tampering(sub, name)
    reply = calls.call(sub, name, args, kwargs, trace=True, **opts)
    findings = sub.submission.findings  # a dict: no_tracing_tampering checked it
    excused = findings.get("excused") or {}
    found = sorted(
        f
        for f in list((findings.get("forbidden") or {}).get(name) or []) + list(findings.get("unchecked") or [])
        if excused.get(f) not in provided
    )
    if found:
        failing.fail(
            failing.caused(
                t("builtin_in_source", name=name, finding=finding_text(found[0], sub.submission.cells)),
                Msg("cause_builtin_source"),
            )
        )
    if reply.forbidden_seen:
        failing.fail(
            failing.caused(t("builtin_called", name=name, builtin=reply.forbidden_seen[0]), Msg("cause_builtin_traced"))
        )
    return reply


def expect_value_error(sub, name, args, kwargs=None, why="", **opts):
    """The call raises ValueError; `why` (rendered from the catalog) says why it must."""
    reply = sub.call(name, args, kwargs, CallOptions(**opts))
    what = calls.describe_call(name, args, kwargs)
    if reply.ok:
        failing.fail(failing.caused(t("returned_no_value_error", what=what, why=why), Msg("cause_sizes_unchecked")))
    if calls.raised(reply, "AssertionError"):
        failing.fail(
            failing.caused(
                t("raised_not_value_error", what=what, error=reply.error.rstrip(), why=why), Msg("cause_assert_sizes")
            )
        )
    if not calls.raised(reply, "ValueError"):
        failing.fail(
            failing.caused(
                t("raised_not_value_error", what=what, error=reply.error.rstrip(), why=why),
                Msg("cause_sizes_checked_late"),
            )
        )
