"""The training lab's run in the grader, as grading.yml sets it: the settings' schema
(`assignments.<this assignment>.run`) and the text of its `kit-grading-run` cell. The task,
the trainings and the checks are `training.py` and `test_training_run.py`."""

from typing import Any

from autograder.schema import COUNT, POSITIVE, Int, Invalid, ListOf, Number, Section


def _thresholds_at_lengths(run: dict[str, Any], key: str) -> None:
    """The per-length thresholds name only lengths the judge evaluates."""
    lengths = set(run["eval_lengths"])
    for name in ("accuracy", "gap_over_baseline"):
        at = run["thresholds"][name]
        if not set(at) <= lengths:
            raise Invalid(
                f"{key}.thresholds.{name}", f"must map lengths of eval_lengths {sorted(lengths)} to numbers", at
            )


PER_LENGTH = Section(
    names=lambda n: type(n) is int and n > 0, each=Number(), names_are="lengths of eval_lengths", nonempty=True
)
SCHEMA = Section(
    {
        "seed": Int(0),
        "steps": COUNT,
        "batch_size": COUNT,
        "max_len": COUNT,
        "n_symbols": Int(2),
        "sizes": Section({"emb_dim": COUNT, "hidden_dim": COUNT, "attn_dim": COUNT}),
        "lr": POSITIVE,
        "eval_lengths": ListOf(COUNT, nonempty=True),
        "eval_per_length": COUNT,
        "cpu_seconds": Number(0, above=True, unit="seconds"),
        "eval_cpu_seconds": Number(0, above=True, unit="seconds"),
        "thresholds": Section(
            {
                "accuracy": PER_LENGTH,
                "gap_over_baseline": PER_LENGTH,
                "zeroed_context_at_most": Number(),
                "loss_ratio_at_most": Number(),
            }
        ),
    },
    rules=(_thresholds_at_lengths,),
)


def grading_text(run: dict[str, Any], points: float, lang: str) -> str:
    """The `kit-grading-run` cell: the run's settings and thresholds, in `lang`."""
    from autograder.build.grading_text import at_lengths, listing, number, phrase

    th = run["thresholds"]
    sizes = run["sizes"]
    lengths = sorted(run["eval_lengths"])
    return "\n".join(
        [
            phrase("grading_run_title", lang, points=number(points, lang)),
            "",
            phrase(
                "grading_run_body",
                lang,
                steps=run["steps"],
                lr=number(run["lr"], lang),
                batch_size=run["batch_size"],
                max_len=run["max_len"],
                n_symbols=run["n_symbols"],
                chance=number(round(1 / run["n_symbols"], 4), lang),
                emb_dim=sizes["emb_dim"],
                hidden_dim=sizes["hidden_dim"],
                attn_dim=sizes["attn_dim"],
                cpu_seconds=number(run["cpu_seconds"], lang),
                per_length=run["eval_per_length"],
                lengths=listing([str(n) for n in lengths], lang),
            ),
            "",
            phrase("grading_run_loss", lang, ratio=number(th["loss_ratio_at_most"], lang)),
            phrase("grading_run_accuracy", lang, at=at_lengths(th["accuracy"], lang)),
            phrase("grading_run_gap", lang, at=at_lengths(th["gap_over_baseline"], lang)),
            phrase("grading_run_zeroed", lang, longest=lengths[-1], most=number(th["zeroed_context_at_most"], lang)),
            "",
            phrase("grading_run_public", lang),
        ]
    )
