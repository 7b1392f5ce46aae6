"""grading.yml's one schema: every key of the kit's file is typed, an unknown key anywhere is
refused, and a bad course file stops every verb before anything is graded, in one line."""

import copy

import pytest
import yaml

from autograder import config, schema
from conftest import course_cfg, run_cli

PACKAGED = yaml.safe_load(config.packaged_text())


def _leaves(data, key=()):
    """(path, value) of every setting of the file, mappings walked, lists and scalars leaves."""
    for name, value in data.items():
        if isinstance(value, dict) and value:
            yield from _leaves(value, (*key, name))
        else:
            yield (*key, name), value


def _wrong(value):
    """A value of another type than `value`'s (what a careless edit writes)."""
    if isinstance(value, bool):
        return 1
    if isinstance(value, (int, float)):
        return "1MB"
    if isinstance(value, str):
        return 5
    return "many"


def _with(path, value):
    data = copy.deepcopy(PACKAGED)
    where = data
    for name in path[:-1]:
        where = where[name]
    where[path[-1]] = value
    return data


def _dotted(path):
    return ".".join(str(p) for p in path)


def test_the_kits_file_passes_its_schema_and_every_setting_is_typed(tmp_path):
    assert course_cfg(tmp_path, PACKAGED).limits == PACKAGED["limits"]
    leaves = list(_leaves(PACKAGED))
    assert len(leaves) > 60
    for path, value in leaves:
        with pytest.raises(config.ConfigError) as exc:
            course_cfg(tmp_path, _with(path, _wrong(value)))
        line = str(exc.value)
        assert "\n" not in line and str(tmp_path / "grading.yml") in line, line
        assert _dotted(path) in line, (path, line)


def test_an_unknown_key_at_any_level_is_refused_by_name(tmp_path):
    mappings = [(), *[p for p, v in _walk_mappings(PACKAGED)]]
    assert len(mappings) > 20
    for path in mappings:
        data = copy.deepcopy(PACKAGED)
        where = data
        for name in path:
            where = where[name]
        where["not a setting!"] = 1
        with pytest.raises(config.ConfigError, match="is not a setting of the kit") as exc:
            course_cfg(tmp_path, data)
        assert _dotted((*path, "not a setting!")) in str(exc.value)


def _walk_mappings(data, key=()):
    for name, value in data.items():
        if isinstance(value, dict):
            yield (*key, name), value
            yield from _walk_mappings(value, (*key, name))


@pytest.mark.parametrize(
    "text, line",
    [
        (
            'limits:\n  output_bytes: "1MB"\n',
            "limits.output_bytes must be an integer of bytes above 0 and at most 1099511627776 (got '1MB')",
        ),
        ("limits:\n  output_byte: 5\n", "limits.output_byte is not a setting of the kit (did you mean output_bytes?)"),
        ("tolerances:\n  float32: {atol: 1e-5, rtol: 1.0e-4}\n", "YAML reads 1e-5 as text"),
        ("devices:\n  cpu: [float64, float8]\n", "devices.cpu[1] must be one of float64"),
        ("scoring:\n  evidence_devices: [tpu]\n", "scoring.evidence_devices[0] must be one of cpu, meta, cuda"),
        ("language: fr\n", "language must be one of pt-BR, en"),
        ("ci:\n  pass_fraction: 60\n", "ci.pass_fraction must be a number from 0 to 1"),
        ("limits:\n  memory_mb: .nan\n", "limits.memory_mb must be an integer of MiB above 0"),
        ("limits:\n  memory_mb: .inf\n", "limits.memory_mb must be an integer of MiB above 0"),
        # an int the interpreter refuses to read (4300 digits or more): one line, not a traceback
        ("limits:\n  memory_mb: " + "9" * 5000 + "\n", "grading.yml: Exceeds the limit (4300 digits)"),
        # a load limit the submission's cannot hold: every worker would be unconfinable
        ("limits:\n  load_seconds: 900\n", "limits.load_seconds must be below submission_cpu_seconds (900)"),
        ("limits:\n  submission_cpu_seconds: 60\n", "limits.load_seconds must be below submission_cpu_seconds (60)"),
    ],
)
def test_a_careless_course_file_is_one_line_naming_the_key(tmp_path, text, line):
    path = tmp_path / "grading.yml"
    path.write_text(text)
    config._load.cache_clear()
    with pytest.raises(config.ConfigError) as exc:
        config.load(path)
    assert line in str(exc.value) and "\n" not in str(exc.value)


def test_cross_key_rules_name_the_key():
    with pytest.raises(schema.Invalid, match="devices.cpu names float16, which tolerances does not set"):
        data = copy.deepcopy(PACKAGED)
        del data["tolerances"]["float16"]
        schema.GRADING.check(data, "")
    with pytest.raises(schema.Invalid, match=r"assignments.seq2seq_attention.run.thresholds.accuracy must map lengths"):
        data = copy.deepcopy(PACKAGED)
        data["assignments"]["seq2seq_attention"]["run"]["thresholds"]["accuracy"] = {5: 0.9}
        schema.GRADING.check(data, "")


def test_each_run_is_checked_by_its_own_assignments_schema():
    """An assignment's run is checked by the schema its declaration holds: one assignment's
    keys are refused in another's run, and a run on an assignment that declares none is refused."""
    from autograder import declarations

    runs = {n: declarations.run(n) for n in PACKAGED["assignments"]}
    trains = sorted(n for n, r in runs.items() if r is not None)
    assert trains and all("run" in PACKAGED["assignments"][n] for n in trains)
    for name in trains:
        for other in trains:
            if other != name:
                data = copy.deepcopy(PACKAGED)
                data["assignments"][name]["run"] = copy.deepcopy(PACKAGED["assignments"][other]["run"])
                with pytest.raises(schema.Invalid, match=rf"^assignments\.{name}\.run"):
                    schema.GRADING.check(data, "")
        data = copy.deepcopy(PACKAGED)
        del data["assignments"][name]["run"]
        with pytest.raises(schema.Invalid, match=rf"assignments.{name} needs run"):
            schema.GRADING.check(data, "")
    plain = next(n for n, r in runs.items() if r is None)
    data = copy.deepcopy(PACKAGED)
    data["assignments"][plain]["run"] = {"steps": 1}
    with pytest.raises(schema.Invalid, match=rf"assignments.{plain}.run is not a setting of this assignment"):
        schema.GRADING.check(data, "")


def test_each_assignments_cost_settings_are_checked_by_its_own_schema(tmp_path):
    """An assignment graded on cost (`COSTS` in its declaration) needs its `costs`, checked by
    its own schema and rules (a cap the full score matrix would fit under measures nothing);
    `costs` on an assignment that grades no cost is refused; a course file's costs merge over
    the packaged ones key by key."""
    from autograder import declarations

    costed = sorted(n for n in PACKAGED["assignments"] if declarations.costs(n) is not None)
    assert costed and all("costs" in PACKAGED["assignments"][n] for n in costed)
    for name in costed:
        data = copy.deepcopy(PACKAGED)
        del data["assignments"][name]["costs"]
        with pytest.raises(schema.Invalid, match=rf"assignments.{name} needs costs"):
            schema.GRADING.check(data, "")
        data = copy.deepcopy(PACKAGED)
        data["assignments"][name]["costs"]["typo"] = 1
        with pytest.raises(schema.Invalid, match=rf"^assignments\.{name}\.costs"):
            schema.GRADING.check(data, "")
    name = "efficient_attention"
    for key, value, said in (("length", 1024, "must make the float32 scores"), ("reference_mb", 300, "must be under")):
        data = copy.deepcopy(PACKAGED)
        data["assignments"][name]["costs"]["memory"][key] = value
        with pytest.raises(schema.Invalid, match=rf"assignments.{name}.costs.memory.{key} {said}"):
            schema.GRADING.check(data, "")
    plain = next(n for n in PACKAGED["assignments"] if declarations.costs(n) is None)
    data = copy.deepcopy(PACKAGED)
    data["assignments"][plain]["costs"] = {"memory": {}}
    with pytest.raises(schema.Invalid, match=rf"assignments.{plain}.costs is not a setting of this assignment"):
        schema.GRADING.check(data, "")
    packaged = PACKAGED["assignments"][name]["costs"]
    entry = {**copy.deepcopy(PACKAGED["assignments"][name]), "costs": {"memory": {**packaged["memory"], "cap_mb": 200}}}
    cfg = course_cfg(tmp_path, {"assignments": {name: entry}})
    assert cfg.costs(name) == {"memory": {**packaged["memory"], "cap_mb": 200}}
    del entry["costs"]
    assert course_cfg(tmp_path, {"assignments": {name: entry}}).costs(name) == packaged


def test_an_old_top_level_run_section_still_works_with_one_deprecation_line(tmp_path, capfd):
    """A course file of the layout before runs sat under their assignment: its run section
    is the run of the assignment whose declaration names it, merged key by key, and stderr
    says once, in one line, where it goes now; the new place wins over the old one."""
    from autograder import declarations

    for old, names in declarations.legacy_runs().items():
        name = names[0]
        packaged = PACKAGED["assignments"][name]["run"]
        cfg = course_cfg(tmp_path, {old: {"steps": 7}})
        assert cfg.run(name) == {**packaged, "steps": 7}
        assert old not in cfg.data
        err = capfd.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"'{old}' is deprecated" in err[0] and f"assignments.{name}.run" in err[0], err
        entry = {**copy.deepcopy(PACKAGED["assignments"][name]), "run": {"steps": 9}}
        cfg = course_cfg(tmp_path, {old: {"steps": 7, "seed": 3}, "assignments": {name: entry}})
        assert cfg.run(name) == {**packaged, "steps": 9, "seed": 3}, "the new place wins, key by key"
        capfd.readouterr()
        entry = {**copy.deepcopy(PACKAGED["assignments"][name]), "run": {"steps": 9}}
        assert course_cfg(tmp_path, {"assignments": {name: entry}}).run(name) == {**packaged, "steps": 9}
        assert capfd.readouterr().err == "", "the new place says nothing"


def test_grade_refuses_a_bad_course_file_before_grading_anything(tmp_path):
    (tmp_path / "grading.yml").write_text('limits:\n  output_bytes: "1MB"\n')
    nb = tmp_path / "a.ipynb"
    nb.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    for verb in (["grade", str(nb), "--out", str(tmp_path / "out")], ["check", str(nb)]):
        proc = run_cli(*verb, check=False, env={"KIT_GRADING_YML": str(tmp_path / "grading.yml")})
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert proc.stderr.strip().splitlines() == [
            f"{verb[0]}: {tmp_path / 'grading.yml'}: limits.output_bytes must be an integer of bytes above 0 and at most 1099511627776 (got '1MB')"
        ]
    assert not (tmp_path / "out").exists()


def test_an_assignment_title_is_one_text_or_one_per_language(tmp_path):
    """What a student reads is in the edition's language: a title given per language must give
    every language the kit writes; one text serves every edition."""
    from autograder import messages

    cfg = course_cfg(tmp_path, PACKAGED)
    for name in cfg.assignments:
        editions = {lang: messages.title(cfg, name, lang) for lang in messages.LANGUAGES}
        assert all(editions.values()) and name not in editions.values(), editions
    assert messages.title(cfg, "classic_attention", "pt-BR") == "Atenção clássica: Bahdanau e Luong"
    assert messages.title(cfg, "classic_attention", "en") == "Classic attention (Bahdanau and Luong)"
    with messages.language("pt-BR"):
        assert messages.title(cfg, "classic_attention") == "Atenção clássica: Bahdanau e Luong"
    one = copy.deepcopy(PACKAGED)
    one["assignments"]["multi_head"]["title"] = "Atenção multi-head"
    assert {messages.title(course_cfg(tmp_path, one), "multi_head", lang) for lang in messages.LANGUAGES} == {
        "Atenção multi-head"
    }
    half = copy.deepcopy(PACKAGED)
    half["assignments"]["multi_head"]["title"] = {"en": "Multi-head attention"}
    with pytest.raises(config.ConfigError, match=r"assignments\.multi_head\.title must give a text in every language"):
        course_cfg(tmp_path, half)
    # a title is a heading of the feedback and its page's <title>: one printable line, either form
    for title in ("Atenção\n\nmore", "\x1b[31mred", "a\u202eb", "x" * 201, {"en": "ok", "pt-BR": "dois\nlinhas"}):
        bad = copy.deepcopy(PACKAGED)
        bad["assignments"]["multi_head"]["title"] = title
        with pytest.raises(
            schema.Invalid, match=r"^assignments\.multi_head\.title.* must be one line of printable text"
        ):
            schema.GRADING.check(bad, "")


def _numbers(data, key=()):
    """(path, value) of every number of the file, runs included (lists left out)."""
    for name, value in data.items():
        if isinstance(value, dict):
            yield from _numbers(value, (*key, name))
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            yield (*key, name), value


def test_no_setting_takes_a_number_the_machine_cannot_hold():
    """Infinity, NaN and an int beyond a float's range are refused by every number of the file
    (a course's `.inf` for "no limit" once crashed the worker, and was charged to the student,
    or wrote `Infinity` into results.json), one line naming the key."""
    leaves = list(_numbers(PACKAGED))
    assert len(leaves) > 40
    for path, _ in leaves:
        for value in (float("inf"), float("-inf"), float("nan"), 10**400):
            with pytest.raises(schema.Invalid) as exc:
                schema.GRADING.check(_with(path, value), "")
            assert exc.value.line().startswith(_dotted(path) + " must be"), (path, value, exc.value.line())


@pytest.mark.slow  # starts a worker (a torch import)
def test_every_limit_the_schema_takes_confines_a_worker():
    """Each limit at the largest value the schema takes is one the operating system and the
    judge's timers hold: a worker under all of them at once loads and answers."""
    import resource
    from pathlib import Path

    import torch

    from autograder.judge.notebook import Cell, Submission
    from autograder.judge.remote import Remote
    from autograder.sandbox.limits import Limits

    most = {name: spec.most for name, spec in schema.LIMITS.fields.items()}
    assert all(m is not None for m in most.values()), most
    most["load_seconds"] = most["submission_cpu_seconds"] - 2  # the cross-key rule: loading within the submission
    # a process count above this machine's own hard RLIMIT_NPROC is refused by its kernel: the
    # machine's fault, loud (Unconfined: internal_error), never a course file's line
    most["processes"] = min(most["processes"], resource.getrlimit(resource.RLIMIT_NPROC)[1])
    data = _with(("limits",), {**PACKAGED["limits"], **most})
    schema.GRADING.check(data, "")
    code = "def double(x):\n    return x * 2\n"
    remote = Remote(Submission(Path("inline.ipynb"), {}, [Cell(1, code, code)]), "", Limits.from_config(data["limits"]))
    try:
        reply = remote.call("double", [torch.ones(3)])
    finally:
        remote.close()
    assert reply.ok and torch.equal(reply.value, torch.full((3,), 2.0)), reply.error
