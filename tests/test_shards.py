"""Grading a class in shards: `grade --shard I/N` on separate machines, then `merge`, gives
what one run gives (grades.csv byte for byte, every results.json and feedback file), and the
split is fixed by each file alone."""

import json
import os
import shutil
from pathlib import Path

import pytest

from autograder.audit import examples as examples_mod
from autograder.grade import Found, assign_ids
from autograder.grade import shard as shard_mod
from conftest import run_cli

SDP = examples_mod.EXAMPLES / "scaled_dot_product"
CLASSIC = examples_mod.EXAMPLES / "classic_attention"
N = 3
TIMING = ("execution_time",)


def found(*rels, base="/course/subs"):
    return [
        Found(Path(base, r), tuple(Path(r).parts), tuple(Path(base, r).parts[1:]), str(Path(base, r)), base)
        for r in rels
    ]


# -- the split, without grading ------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, ok",
    [
        ("1/1", (1, 1)),
        ("3/8", (3, 8)),
        (" 2 / 4 ", (2, 4)),
        ("0/4", None),
        ("5/4", None),
        ("1", None),
        ("a/b", None),
        ("-1/4", None),
        ("1/0", None),
    ],
)
def test_shard_specs(text, ok):
    if ok:
        assert shard_mod.parse(text) == ok
    else:
        with pytest.raises(shard_mod.ShardError) as err:
            shard_mod.parse(text)
        assert "\n" not in str(err.value)


def test_every_file_is_in_one_shard_and_a_new_file_moves_no_other():
    files = [f"student{i:03d}/hw.ipynb" for i in range(300)] + [f"s{i}.ipynb" for i in range(100)]
    for n in (1, 2, 3, 7, 16):
        where = {f: shard_mod.number(Path(f).parts, n) for f in files}
        assert set(where.values()) <= set(range(1, n + 1))
        assert len(set(where.values())) == n, "every shard gets files"
        sizes = [list(where.values()).count(i) for i in range(1, n + 1)]
        assert max(sizes) < 2.0 * len(files) / n + 10, sizes  # roughly even
        more = {f: shard_mod.number(Path(f).parts, n) for f in files[::-1] + ["late/hw.ipynb", "z.ipynb"]}
        assert all(more[f] == where[f] for f in files), "order and new files change no file's shard"


def test_a_shards_ids_are_the_single_runs():
    # Hw and hw clash ignoring case: wherever each one's shard is, both ids are widened as in one run
    files = found("Hw.ipynb", "hw.ipynb", "a/x.ipynb", "b/x.ipynb")
    ids = assign_ids(files)
    assert ids[files[0]].lower() != ids[files[1]].lower() and ids[files[0]] != "Hw"


# -- through the CLI -------------------------------------------------------------------------------
def _nb(path):
    return json.loads(Path(path).read_text())


def _write(path, data):
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(data) if isinstance(data, dict) else data)


def _class(folder):
    """Five notebooks to grade and one broken file; a Gradescope export's metadata for two;
    HW2 and hw2 (ids that clash ignoring case, in different shards); one notebook of another assignment (the batch's is decided
    by majority: every shard must decide the same)."""
    _write(folder / "submission_1" / "attention.ipynb", _nb(SDP / "reference.ipynb"))
    _write(folder / "submission_5" / "attention.ipynb", _nb(SDP / "causal_mask_triu_pt-BR.ipynb"))
    _write(folder / "HW2.ipynb", _nb(SDP / "template.ipynb"))
    _write(folder / "hw2.ipynb", _nb(SDP / "padding_mask_off_by_one.ipynb"))
    _write(folder / "classic.ipynb", _nb(CLASSIC / "reference.ipynb"))
    _write(folder / "truncated.ipynb", (SDP / "reference.ipynb").read_text()[:700])
    _write(
        folder / "submission_metadata.yml",
        "submission_1:\n  :submitters:\n  - {':name': Ada, ':email': ada@example.edu, ':sid': '1'}\n"
        "submission_5:\n  :submitters:\n  - {':name': Bea, ':email': bea@example.edu, ':sid': '2'}\n"
        "  - {':name': Cy, ':email': cy@example.edu, ':sid': '3'}\n",
    )
    return folder


def _untimed(obj):
    if isinstance(obj, dict):
        return {k: _untimed(v) for k, v in obj.items() if k not in TIMING and not k.endswith("_peak_mb")}
    if isinstance(obj, list):
        return [_untimed(v) for v in obj]
    return obj


def _tree(out):
    """{id: {file: content}} of a grade or merge folder (results.json without timing)."""
    got = {}
    for folder in sorted(p for p in Path(out).iterdir() if p.is_dir()):
        got[folder.name] = {
            "results.json": _untimed(json.loads((folder / "results.json").read_text())),
            "feedback.md": (folder / "feedback.md").read_bytes(),
            "feedback.html": (folder / "feedback.html").read_bytes(),
        }
    return got


@pytest.fixture(scope="module")
def sharded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("shards")
    subs = _class(tmp / "subs")
    single = tmp / "single"
    run_cli("grade", subs, "--out", single, "--no-progress", "--jobs", "1")
    shards = []
    for i in range(1, N + 1):  # each its own process, as on its own machine
        proc = run_cli(
            "grade", subs, "--out", tmp / f"shard-{i}", "--shard", f"{i}/{N}", "--no-progress", "--jobs", "1"
        )
        assert "detected over every file found" in proc.stderr
        shards.append(tmp / f"shard-{i}")
    merged = tmp / "merged"
    proc = run_cli("merge", *shards, "--out", merged)
    return tmp, subs, single, shards, merged, proc


@pytest.mark.slow
def test_merged_shards_are_the_single_run(sharded):
    tmp, subs, single, shards, merged, proc = sharded
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert (merged / "grades.csv").read_bytes() == (single / "grades.csv").read_bytes()
    one, many = _tree(single), _tree(merged)
    assert sorted(one) == sorted(many) and len(one) == 6
    for sid in one:
        assert many[sid] == one[sid], sid
    data = one["classic"]["results.json"]
    assert data["assignment"] == "scaled_dot_product", "the batch's assignment, in the shard that holds it too"
    assert len(one["submission_5__attention"]["results.json"]["extra_data"]["submitters"]) == 2


@pytest.mark.slow
def test_each_shard_holds_its_part_and_says_so(sharded):
    tmp, subs, single, shards, merged, proc = sharded
    infos = [json.loads((s / "shard.json").read_text()) for s in shards]
    ids = [sid for info in infos for sid in info["ids"]]
    assert sorted(ids) == sorted(p.name for p in single.iterdir() if p.is_dir()), "each file in exactly one shard"
    assert all(info["ids"] for info in infos), "each of these shards has files (the split is fixed by the names)"
    clash = [
        i for i, info in enumerate(infos) for sid in info["ids"] if sid.rsplit("__", 1)[-1].lower().startswith("hw2")
    ]
    assert len(set(clash)) == 2, "the two clashing ids are in different shards, and widened in both"
    for i, (info, out) in enumerate(zip(infos, shards), 1):
        assert (info["shard"], info["of"], info["found"], info["assignment"]) == (i, N, 6, "scaled_dot_product")
        assert sorted(p.name for p in out.iterdir() if p.is_dir()) == sorted(info["ids"])
    order = [line.split(",")[0] for line in (single / "grades.csv").read_text().splitlines()[1:]]
    placed = sorted(zip((p for info in infos for p in info["positions"]), ids))
    assert [sid for _, sid in placed] == order


@pytest.mark.slow
def test_a_shard_with_no_file_writes_its_shard_json_and_succeeds(sharded, tmp_path):
    tmp, subs, single, shards, merged, proc = sharded
    rels = [tuple(p.relative_to(subs).parts) for p in subs.rglob("*.ipynb")]
    n = 9
    empty = next(i for i in range(1, n + 1) if all(shard_mod.number(r, n) != i for r in rels))
    proc = run_cli(
        "grade",
        subs,
        "--out",
        tmp_path / "o",
        "--shard",
        f"{empty}/{n}",
        "--assignment",
        "scaled_dot_product",
        "--no-progress",
        "--jobs",
        "1",
    )
    info = json.loads((tmp_path / "o" / "shard.json").read_text())
    assert info["ids"] == [] and info["found"] == 6 and "holds none of the 6" in proc.stdout
    assert (tmp_path / "o" / "grades.csv").read_text().startswith("id,path,assignment,")


@pytest.mark.slow
def test_merge_warns_about_a_missing_shard_and_merges_the_rest(sharded, tmp_path):
    tmp, subs, single, shards, merged, proc = sharded
    proc = run_cli("merge", shards[0], shards[2], "--out", tmp_path / "m", check=False)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"shard 2/{N} missing" in lines[0], proc.stderr
    rows = (tmp_path / "m" / "grades.csv").read_text().splitlines()
    want = [
        line
        for line in (single / "grades.csv").read_text().splitlines()[1:]
        if line.split(",")[0] not in json.loads((shards[1] / "shard.json").read_text())["ids"]
    ]
    assert [r.split(",")[0] for r in rows[1:]] == [w.split(",")[0] for w in want]


@pytest.mark.slow
def test_merge_refuses_one_id_with_two_contents_and_writes_nothing(sharded, tmp_path):
    tmp, subs, single, shards, merged, proc = sharded
    info = json.loads((shards[0] / "shard.json").read_text())
    sid = info["ids"][0]
    other = tmp_path / "other"
    shutil.copytree(shards[1], other)
    shutil.copytree(shards[0] / sid, other / sid)
    data = json.loads((other / sid / "results.json").read_text())
    data["score"] = 99.0
    (other / sid / "results.json").write_text(json.dumps(data))
    other_info = json.loads((other / "shard.json").read_text())
    other_info["ids"].append(sid)
    other_info["positions"].append(info["positions"][0])
    (other / "shard.json").write_text(json.dumps(other_info))
    proc = run_cli("merge", shards[0], other, shards[2], "--out", tmp_path / "m", check=False)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and sid in proc.stderr and "different content" in proc.stderr
    assert not (tmp_path / "m").exists(), "nothing written"
    # the same content twice is no conflict
    shutil.rmtree(other / sid)
    shutil.copytree(shards[0] / sid, other / sid)
    proc = run_cli("merge", shards[0], other, shards[2], "--out", tmp_path / "m2")
    assert (tmp_path / "m2" / "grades.csv").read_bytes() == (single / "grades.csv").read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize(
    "change, message",
    [
        ({"of": 4}, "different splits"),
        ({"assignment": "multi_head"}, "different assignments"),
    ],
)
def test_merge_refuses_shards_of_different_runs(sharded, tmp_path, change, message):
    tmp, subs, single, shards, merged, proc = sharded
    other = tmp_path / "other"
    shutil.copytree(shards[1], other)
    info = json.loads((other / "shard.json").read_text())
    (other / "shard.json").write_text(json.dumps({**info, **change}))
    proc = run_cli("merge", shards[0], other, shards[2], "--out", tmp_path / "m", check=False)
    assert proc.returncode == 2 and message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--shard", "0/3"], "I must be between 1 and N"),
        (["--shard", "x"], "--shard takes I/N"),
    ],
)
def test_bad_shards_are_one_line_errors(tmp_path, args, message):
    proc = run_cli("grade", SDP / "reference.ipynb", "--out", tmp_path / "o", *args, "--no-progress", check=False)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and message in proc.stderr
    assert not os.path.exists(tmp_path / "o")
