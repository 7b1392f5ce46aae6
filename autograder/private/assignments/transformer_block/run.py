"""The transformer lab's run in the grader, as grading.yml sets it: the settings' schema
(`assignments.<this assignment>.run`) and the text of its `kit-grading-run` cell. The task,
the trainings and the checks are `training.py` and `test_training_run.py`."""

from typing import Any

from autograder.schema import COUNT, POSITIVE, Int, Invalid, Number, Section


def _heads_divide(run: dict[str, Any], key: str) -> None:
    d_model, heads = run["sizes"]["d_model"], run["sizes"]["n_heads"]
    if d_model % 2 or d_model % heads:
        raise Invalid(f"{key}.sizes.d_model", "must be even and a multiple of n_heads", d_model)


SCHEMA = Section(
    {
        "seed": Int(0),
        "steps": COUNT,
        "batch_size": COUNT,
        "length": Int(2),  # the reads-ahead check needs two prompt symbols
        "n_symbols": Int(2),
        "sizes": Section({"d_model": COUNT, "n_heads": COUNT, "d_ff": COUNT, "n_layers": COUNT}),
        "lr": POSITIVE,
        "eval_sequences": COUNT,
        "cpu_seconds": Number(0, above=True, unit="seconds"),
        "eval_cpu_seconds": Number(0, above=True, unit="seconds"),
        "thresholds": Section(
            {
                "accuracy": Number(),
                "positions_drop": Number(),
                "reads_future_at_most": Number(),
                "loss_ratio_at_most": Number(),
            }
        ),
    },
    rules=(_heads_divide,),
)


def grading_text(run: dict[str, Any], points: float, lang: str) -> str:
    """The `kit-grading-run` cell: the run's settings and thresholds, in `lang`."""
    from autograder.build.grading_text import number, phrase

    th = run["thresholds"]
    sizes = run["sizes"]
    return "\n".join(
        [
            phrase("grading_run_title", lang, points=number(points, lang)),
            "",
            phrase(
                "grading_trun_body",
                lang,
                steps=run["steps"],
                lr=number(run["lr"], lang),
                batch_size=run["batch_size"],
                length=run["length"],
                n_symbols=run["n_symbols"],
                chance=number(round(1 / run["n_symbols"], 4), lang),
                d_model=sizes["d_model"],
                n_heads=sizes["n_heads"],
                d_ff=sizes["d_ff"],
                n_layers=sizes["n_layers"],
                cpu_seconds=number(run["cpu_seconds"], lang),
                eval_sequences=run["eval_sequences"],
            ),
            "",
            phrase("grading_trun_loss", lang, ratio=number(th["loss_ratio_at_most"], lang)),
            phrase("grading_trun_accuracy", lang, least=number(th["accuracy"], lang)),
            phrase("grading_trun_positions", lang, drop=number(th["positions_drop"], lang)),
            phrase("grading_trun_reads_ahead", lang, most=number(th["reads_future_at_most"], lang)),
            "",
            phrase("grading_trun_public", lang),
        ]
    )
