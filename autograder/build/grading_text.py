"""The notebooks' "How you are graded", generated from grading.yml at build time.

Students never receive grading.yml, so what it says about them is written into
their notebook: the devices and dtypes that earn points and those that are only
reported (`devices`, `scoring.evidence_devices`), the tolerances, what the `meta`
device is, why a finite fill such as -1e9 fails in float16, the time and memory
limits (`limits`), the packages the grader has and the order it runs the cells in
(`judge.form.PACKAGES`: the same list the public checks hold a notebook to) and, in an assignment with a `training_run` question, the run the
grader trains (its settings section: `training_run` for the training lab,
`transformer_run` for the transformer lab, config.RUN_SECTIONS). Two kinds of generated
markdown cell, each found by its tag in the master notebook:

- `kit-grading`: the overview, one per assignment, after the opening cell;
- `kit-grading-run`: the training run's settings and thresholds, the prompt of
  the `training_run` question (only an assignment with that question has one).

`sync` writes the English into the master notebook (a change to grading.yml is
drift until the next build, as points are); `editions.localize` puts each
edition's text in its place. The sentences are the build's own texts
(`texts.yml`, keys `grading_*`, both languages); the numbers come from the cfg.
`render(tag, assignment, lang, cfg)` is the one entry point.
"""

import re
from functools import cache

from autograder import config as config_mod
from autograder import layout
from autograder.build import texts
from autograder.judge import form

TAG = "kit-grading"
RUN_TAG = "kit-grading-run"
TAGS = (TAG, RUN_TAG)
RUN_QUESTION = config_mod.RUN_QUESTION
HALF = ("float16", "bfloat16")


@cache
def suite_uses(assignment):
    """(matrix, meta) for an assignment's hidden suite: whether its cases run on every
    (device, dtype) pair of grading.yml (the `dd` fixture) and on the `meta` device.
    Read from the suite's source; an assignment without a suite here (the public part of
    the kit) is taken to use both, as three of the kit's four do."""
    folder = layout.SUITES / assignment
    if not folder.is_dir():
        return True, True
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.py")))
    params = re.findall(r"def test_\w+\(([^)]*)\)", text)
    matrix = any(re.search(r"\bdd\b", p) for p in params)
    meta = any(re.search(r"\bdevice\b", p) for p in params) or 'device="meta"' in text
    return matrix, meta


def _t(key, lang, **fields):
    text = texts.get(key, lang)
    return text.format(**fields) if fields else text


def _join(items, lang):
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + _t("grading_and", lang) + items[-1]


def _place(device, lang):
    key = f"grading_place_{device}"
    if key in texts.load():
        return _t(key, lang)
    return _t("grading_place_other", lang, device=device)


def _where(pairs, lang):
    """ "on the CPU in float64 and float32, and on ..." for [(device, [dtype])]."""
    parts = [_t("grading_in_dtypes", lang, place=_place(d, lang), dtypes=_join(dts, lang)) for d, dts in pairs if dts]
    return _join(parts, lang)


def _num(x):
    return f"{x:g}"


def _cfg(cfg):
    return cfg if cfg is not None else config_mod.load()


run_section = config_mod.run_section


def _run(assignment, cfg):
    """`assignment`'s run settings (the cfg's `training_run` or `transformer_run`)."""
    return getattr(cfg, run_section(assignment))


def overview(assignment, lang, cfg=None):
    """The `kit-grading` cell of an assignment, in `lang`."""
    cfg = _cfg(cfg)
    matrix, meta = suite_uses(assignment)
    evidence = cfg.evidence_devices()
    devices = cfg.devices
    # the devices with values (meta has none: its cases check shapes, dtypes and devices)
    real = [(d, dts) for d, dts in devices.items() if d not in evidence and d != "meta" and dts]
    reported = [(d, dts) for d, dts in devices.items() if d in evidence and d != "meta" and dts]
    out = [_t("grading_head", lang), ""]
    if matrix:
        tolerances = []
        for dtype in dict.fromkeys(dt for _, dts in real for dt in dts):
            atol, rtol = cfg.tolerance(dtype)
            tolerances.append(_t("grading_tolerance", lang, dtype=dtype, atol=_num(atol), rtol=_num(rtol)))
        out.append(
            _t(
                "grading_scored",
                lang,
                where=_where(real, lang),
                tolerances=_join(tolerances, lang),
            )
        )
        if reported:
            out.append(_t("grading_evidence", lang, where=_where(reported, lang)))
        half_scored = [(d, [t for t in dts if t in HALF]) for d, dts in real]
        half_reported = [(d, [t for t in dts if t in HALF]) for d, dts in reported]
        if any(dts for _, dts in half_scored):
            out.append(
                _t("grading_half_scored", lang, where=_where(half_scored, lang)) + " " + _t("grading_half_fill", lang)
            )
        elif any(dts for _, dts in half_reported):
            out.append(
                _t("grading_half_reported", lang, where=_where(half_reported, lang))
                + " "
                + _t("grading_half_fill", lang)
            )
    else:
        atol, rtol = cfg.tolerance("float64")
        out.append(_t("grading_scored_cpu", lang, atol=_num(atol), rtol=_num(rtol)))
    if meta and devices.get("meta"):
        key = "grading_meta" if "meta" not in evidence else "grading_meta_reported"
        out.append(_t(key, lang, dtypes=_join(devices["meta"], lang)))
    limits = cfg.limits
    out.append(
        _t(
            "grading_time",
            lang,
            load_seconds=limits["load_seconds"],
            call_seconds=limits["cpu_seconds_per_call"],
            submission_seconds=limits["submission_seconds"],
            memory_mb=limits["memory_mb"],
        )
    )
    out.append(_t("grading_packages", lang, packages=_join([f"`{p}`" for p in form.PACKAGES], lang)))
    if RUN_QUESTION in cfg.questions(assignment):
        run = _run(assignment, cfg)
        out.append(
            _t(
                "grading_run_pointer",
                lang,
                points=_num(cfg.questions(assignment)[RUN_QUESTION]),
                cpu_seconds=_num(run["cpu_seconds"]),
            )
        )
    return "\n".join(out)


def _at_lengths(mapping, lang):
    return _join(
        [_t("grading_at_length", lang, value=_num(v), length=k) for k, v in sorted(mapping.items())],
        lang,
    )


def training_run(assignment, lang, cfg=None):
    """The `kit-grading-run` cell: the training run's settings and thresholds, in `lang`."""
    cfg = _cfg(cfg)
    if run_section(assignment) == "transformer_run":
        return transformer_run(assignment, lang, cfg)
    run = cfg.training_run
    th = run["thresholds"]
    sizes = run["sizes"]
    lengths = sorted(run["eval_lengths"])
    return "\n".join(
        [
            _t("grading_run_title", lang, points=_num(cfg.questions(assignment)[RUN_QUESTION])),
            "",
            _t(
                "grading_run_body",
                lang,
                steps=run["steps"],
                lr=_num(run["lr"]),
                batch_size=run["batch_size"],
                max_len=run["max_len"],
                n_symbols=run["n_symbols"],
                chance=_num(round(1 / run["n_symbols"], 4)),
                emb_dim=sizes["emb_dim"],
                hidden_dim=sizes["hidden_dim"],
                attn_dim=sizes["attn_dim"],
                cpu_seconds=_num(run["cpu_seconds"]),
                per_length=run["eval_per_length"],
                lengths=_join([str(n) for n in lengths], lang),
            ),
            "",
            _t("grading_run_loss", lang, ratio=_num(th["loss_ratio_at_most"])),
            _t("grading_run_accuracy", lang, at=_at_lengths(th["accuracy"], lang)),
            _t("grading_run_gap", lang, at=_at_lengths(th["gap_over_baseline"], lang)),
            _t("grading_run_zeroed", lang, longest=lengths[-1], most=_num(th["zeroed_context_at_most"])),
            "",
            _t("grading_run_public", lang),
        ]
    )


def transformer_run(assignment, lang, cfg=None):
    """The transformer lab's `kit-grading-run` cell (grading.yml `transformer_run`), in `lang`."""
    cfg = _cfg(cfg)
    run = cfg.transformer_run
    th = run["thresholds"]
    sizes = run["sizes"]
    return "\n".join(
        [
            _t("grading_run_title", lang, points=_num(cfg.questions(assignment)[RUN_QUESTION])),
            "",
            _t(
                "grading_trun_body",
                lang,
                steps=run["steps"],
                lr=_num(run["lr"]),
                batch_size=run["batch_size"],
                length=run["length"],
                n_symbols=run["n_symbols"],
                chance=_num(round(1 / run["n_symbols"], 4)),
                d_model=sizes["d_model"],
                n_heads=sizes["n_heads"],
                d_ff=sizes["d_ff"],
                n_layers=sizes["n_layers"],
                cpu_seconds=_num(run["cpu_seconds"]),
                eval_sequences=run["eval_sequences"],
            ),
            "",
            _t("grading_trun_loss", lang, ratio=_num(th["loss_ratio_at_most"])),
            _t("grading_trun_accuracy", lang, least=_num(th["accuracy"])),
            _t("grading_trun_positions", lang, drop=_num(th["positions_drop"])),
            _t("grading_trun_reads_ahead", lang, most=_num(th["reads_future_at_most"])),
            "",
            _t("grading_trun_public", lang),
        ]
    )


def render(tag, assignment, lang, cfg=None):
    """The text of the generated cell tagged `tag` (one of TAGS)."""
    if tag == TAG:
        return overview(assignment, lang, cfg)
    if tag == RUN_TAG:
        return training_run(assignment, lang, cfg)
    raise ValueError(f"no generated grading text for the tag {tag!r}")


def tag_of(tags):
    """The generated grading tag among a cell's tags, or None."""
    found = [t for t in TAGS if t in tags]
    return found[0] if found else None
