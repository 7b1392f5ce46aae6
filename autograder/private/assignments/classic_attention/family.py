"""The test families every classic attention function is held to.

A question's test file sets SPEC (the function, its parameters, its
reference) and names each check it holds the function to, one test function
each: `def test_padding(sub, cfg): family.padding(sub, cfg, SPEC)`.

Sizes are chosen so that silent broadcasting shows: (B, T, d_s, d_h, d_attn)
all different, and also B == T.
"""

import torch

from autograder.judge.failure import Msg
from autograder.messages import number, t
from autograder.private.suites import calls, causes, compare, dtypes, failing, grads, properties, tensors, value_checks

OUT = ("context", "weights")
# (B, T, d_s, d_h, d_attn): all distinct; B == T; one more.
SIZES = [(3, 5, 4, 6, 7), (4, 4, 5, 3, 6), (2, 7, 6, 5, 4)]
SQUARE_SIZES = [(3, 5, 6, 6, 4), (4, 4, 5, 5, 3), (2, 7, 3, 3, 2)]  # d_s == d_h (Luong dot)


def sizes(spec):
    return SQUARE_SIZES if spec.get("square") else SIZES


def inputs(spec, B, T, d_s, d_h, d_attn, seed, mask=True, lengths=None):
    s = tensors.randn((B, d_s), seed)
    H = tensors.randn((B, T, d_h), seed + 1)
    params = spec["params"](d_s, d_h, d_attn, seed + 2)
    kwargs = {}
    if mask:
        if lengths is None:
            lengths = [T - (b % T) for b in range(B)]  # first row unpadded, the rest padded
        kwargs["mask"] = tensors.lengths_mask(lengths, T)
    return [s, H, *params], kwargs


# -- likely causes ---------------------------------------------------------------


def _alternative_weights(spec, args, mask):
    """(cause, weights) for the usual mistakes, computed here from the inputs: the
    spec's own wrong scores (SPEC["alternatives"], causes rendered from the
    catalog), then a mask left out."""
    from autograder.private.solutions.classic_attention import masked_softmax

    args = [a.detach().double().cpu() for a in args]
    out = []
    for cause, scores in (spec.get("alternatives") or (lambda *a: []))(*args):
        if scores is not None:
            out.append((cause, masked_softmax(scores, mask, dim=-1)))
    if mask is not None:
        with torch.no_grad():
            out.append((causes.mask_ignored(), spec["ref"](*args)[1]))
    return out


def hints(spec, args, kwargs, cfg):
    """Likely causes for wrong weights and a wrong context, from what they hold."""
    mask = kwargs.get("mask")
    cache = []

    def weights(g, e):
        if not cache:
            cache.extend(_alternative_weights(spec, args, mask))
        for cause, w in cache:
            if compare.matches(g, w, cfg):
                return cause
        return causes.weights_hint(g, e, mask)

    def context(g, e):
        T = args[1].shape[1]
        if T > 1 and compare.matches(g, e / T, cfg):
            return Msg("cause_context_mean")
        w = None
        if mask is not None:
            with torch.no_grad():
                w = spec["ref"](*[a.detach().double().cpu() for a in args])[1]
            if compare.matches(g, (w.unsqueeze(1) @ args[1].detach().double().cpu()).squeeze(1), cfg):
                return Msg("cause_context_unmasked")
        if torch.isnan(g).any():
            return Msg("cause_context_nan")
        return None

    return {"weights": weights, "context": context}


def shape_hints(args):
    """A likely cause for a context of the wrong size."""
    d_h = args[1].shape[-1]
    sizes = {a.shape[0] for a in args[2:] if a.dim() >= 1} | {args[0].shape[-1]}  # d_attn, d_s

    def context(got, want):
        if len(got) == 2 and got[0] == want[0] and got[1] != d_h and got[1] in sizes:
            return Msg("cause_context_projected", size=got[1], d_h=d_h)
        if len(got) == 2 and got[0] == want[0] and got[1] == args[1].shape[1]:
            return Msg("cause_context_t_entries")
        return None

    return {"context": context}


def shapes_and_values(sub, cfg, spec):
    for k, size in enumerate(sizes(spec)):
        for masked in (False, True):
            args, kwargs = inputs(spec, *size, seed=200 + 10 * k, mask=masked)
            got, _ = value_checks.check_values(
                sub,
                cfg,
                spec["name"],
                args,
                kwargs,
                spec["ref"],
                OUT,
                hints=hints(spec, args, kwargs, cfg),
                shape_hints=shape_hints(args),
            )
            w = got["weights"].double()
            sums = w.sum(-1)
            value_checks.assert_close(
                sums,
                torch.ones_like(sums),
                t("weights_summed_keys", what=spec["name"]),
                cfg,
                hint=lambda g, e: Msg("cause_rows_not_one_t"),
            )


def padding(sub, cfg, spec):
    """Padded positions get weight exactly 0, and changing them changes nothing."""
    B, T, d_s, d_h, d_attn = sizes(spec)[0]
    lengths = [T, T - 2, 1]
    args, kwargs = inputs(spec, B, T, d_s, d_h, d_attn, seed=300, lengths=lengths)
    got, _ = value_checks.check_runs(
        sub, cfg, spec["name"], args, kwargs, spec["ref"], OUT, shape_hints=shape_hints(args)
    )
    mask = kwargs["mask"]
    leak = got["weights"][~mask]
    if leak.abs().max() != 0:
        with torch.no_grad():
            unmasked = spec["ref"](*args)[1]
        cause = causes.padding_leak_cause(got["weights"], mask, unmasked, cfg)
        failing.fail(
            failing.caused(t("padded_nonzero", name=spec["name"], max=number(float(leak.abs().max()), ".3g")), cause)
        )
    perturbed = [a.clone() for a in args]
    H = perturbed[1]
    H[~mask] += tensors.randn(H[~mask].shape, 301, scale=5.0)
    again = calls.outputs(calls.call(sub, spec["name"], perturbed, kwargs).value, spec["name"], OUT)
    value_checks.assert_close(
        again["context"],
        got["context"],
        t("context_after_padded", name=spec["name"]),
        cfg,
    )


def fully_masked_rows(sub, cfg, spec):
    B, T, d_s, d_h, d_attn = sizes(spec)[0]
    args, kwargs = inputs(spec, B, T, d_s, d_h, d_attn, seed=400, lengths=[T, 0, 2])
    got, _ = value_checks.check_runs(
        sub, cfg, spec["name"], args, kwargs, spec["ref"], OUT, shape_hints=shape_hints(args)
    )
    dead = ~kwargs["mask"].any(-1)  # (B,): the batch row with no real token
    with torch.no_grad():
        unmasked, masked = spec["ref"](*args)[1], spec["ref"](*args, **kwargs)[1]
    value_checks.check_dead_rows(
        calls.describe_call(spec["name"], args, kwargs),
        got["weights"],
        dead,
        unmasked,
        others=[(got["context"], dead)],
        masked=masked,
        cfg=cfg,
    )


def gradients(sub, cfg, spec):
    args, kwargs = inputs(spec, *sizes(spec)[0], seed=500)
    grads.check_grads(
        sub, cfg, spec["name"], args, kwargs, spec["ref"], OUT, seed=510, hints=hints(spec, args, kwargs, cfg)
    )


def dtype_and_device(sub, cfg, spec, dd):
    device, dtype = dd
    args, kwargs = inputs(spec, *sizes(spec)[1], seed=600)
    dtypes.check_in_dtype(
        sub,
        cfg,
        spec["name"],
        args,
        kwargs,
        spec["ref"],
        OUT,
        dtype,
        device,
        hints=hints(spec, args, kwargs, cfg),
        shape_hints=shape_hints(args),
    )


def meta_device(sub, cfg, spec):
    args, kwargs = inputs(spec, *sizes(spec)[0], seed=700)
    value_checks.check_runs(sub, cfg, spec["name"], args, kwargs, spec["ref"], OUT, dtype=torch.float32, device="meta")


def inputs_unchanged(sub, cfg, spec):
    args, kwargs = inputs(spec, *sizes(spec)[2], seed=800)
    value_checks.check_runs(sub, cfg, spec["name"], args, kwargs, spec["ref"], OUT, shape_hints=shape_hints(args))
    properties.check_inputs_unchanged(sub, spec["name"], args, kwargs)


def vectorised(sub, cfg, spec):
    B, T, d_s, d_h, d_attn = sizes(spec)[0]
    args, kwargs = inputs(spec, B, T, d_s, d_h, d_attn, seed=900)
    value_checks.check_runs(sub, cfg, spec["name"], args, kwargs, spec["ref"], OUT, shape_hints=shape_hints(args))
    for grow, make, grows in (
        ("batch", lambda b: inputs(spec, b, T, d_s, d_h, d_attn, seed=910), (2, 4, 6)),
        ("sequence_length", lambda n: inputs(spec, B, n, d_s, d_h, d_attn, seed=910), (3, 6, 9)),
    ):
        properties.check_vectorised(sub, spec["name"], make, grows, grow)
