"""The LMS round trip: Moodle's and Canvas's class downloads in, their rosters filled back out.

The importers' rules are re-stated here from the LMS's source (`moodle_import`,
`moodle_feedback_import`, `canvas_import`: Moodle 4.x `assignfeedback_offline`'s
importgradeslib.php and `assignfeedback_file`'s importziplib.php, Canvas's
gradebook_importer.rb), and every file the kit writes is read back through
them. Most tests build the graded folder in-process (results.json as `grade`
writes it); one slow test grades real notebooks from each layout.
"""

import csv
import io
import json
import re
import zipfile
from pathlib import Path

import pytest

from autograder import cli, config, report
from autograder.grade.discovery import collect, sha256_of
from autograder.grade.results import write_result
from autograder.lms import layouts, roundtrip, writeback
from autograder.lms import roster as roster_mod
from autograder.report import load
from conftest import ROOT, run_cli

EXAMPLES = ROOT / "examples" / "submissions" / "scaled_dot_product"
QUESTIONS = {"by_hand": 2, "causal_mask": 2, "padding_mask": 2, "scaled_dot_product_attention": 6}  # grading.yml's

# Moodle's strings for the worksheet (mod/assign/lang/{en,pt_br}/assign.php: recordid, hiddenuser, maxgrade,
# lastmodifiedgrade, ...; the pt_br langpack 3.11 writes 'Participante' with no trailing space)
EN = {"recordid": "Identifier", "hiddenuser": "Participant ", "grade": "Grade", "modified": "Last modified (grade)",
      "comments": "Feedback comments", "decimal": "."}  # fmt: skip
PT_BR = {"recordid": "Identificador", "hiddenuser": "Participante", "grade": "Nota",
         "modified": "Última modificação (nota)", "comments": "Comentários de feedback", "decimal": ","}  # fmt: skip


# -- the importers' rules, from their source ------------------------------------------------
def moodle_import(text, strings, participants, maxgrade):
    """{participant id: (grade, comment)} as assignfeedback_offline imports `text` (or AssertionError)."""
    rows = list(csv.reader(io.StringIO(text.lstrip("\ufeff"))))
    header = rows[0]
    idx = {k: header.index(strings[k]) for k in ("recordid", "grade", "modified")}  # init(): all three, or refused
    comments = header.index(strings["comments"]) if strings["comments"] in header else None
    out = {}
    for row in rows[1:]:
        pid = row[idx["recordid"]][len(strings["hiddenuser"]) :]  # substr(idstr, strlen(hiddenuser))
        assert pid.isdigit() and int(pid) in participants, row[idx["recordid"]]
        cell = row[idx["grade"]].strip()
        if cell == "":
            continue  # skipped: no value
        assert re.fullmatch(rf"\d+(\{strings['decimal']}\d+)?", cell), cell  # unformat_float in that language
        grade = float(cell.replace(strings["decimal"], "."))
        assert 0 <= grade <= maxgrade, cell  # out of range: skipped
        out[int(pid)] = (grade, row[comments] if comments is not None else None)
    return out


def moodle_feedback_import(zip_path, participants):
    """{participant id: file name} as assignfeedback_file's is_valid_filename_for_import reads the zip."""
    out = {}
    with zipfile.ZipFile(zip_path) as zf:
        for name in zf.namelist():
            parts = name.split("/")
            while parts:
                info = parts.pop(0).split("_", 4)  # explode('_', $pathpart, 5)
                if len(info) < 4 or not info[1].isdigit() or int(info[1]) not in participants:
                    continue
                assert (info[2], info[3]) == ("assignfeedback", "file"), name
                out[int(info[1])] = "/".join([info[4] if len(info) > 4 else "", *parts]).lstrip("/")
                break
            else:
                raise AssertionError(f"{name}: Moodle matches no participant")
    return out


def canvas_import(text, users):
    """{user id: {assignment id: grade}} as gradebook_importer.rb reads `text`."""
    rows = list(csv.reader(io.StringIO(text.lstrip("\ufeff"))))
    header = rows[0]
    assert len(header) > 3 and "Student" in header[0] and "ID" in header[1]  # row_has_student_headers?
    assert header[2:4] == ["SIS User ID", "SIS Login ID"] and "Section" in header[4]  # update_column_count
    columns = {i: int(m.group(1)) for i, h in enumerate(header) if (m := re.search(r"\((\d+)\)$", h))}
    points = next(r for r in rows[1:] if "Points Possible" in r[0])
    out = {}
    for row in rows[1:]:
        if "Points Possible" in row[0] or all(re.fullmatch(r"\s*(Muted|Manual Posting.*)?\s*", c) for c in row):
            continue
        assert int(row[1]) in users, row
        grades = {}
        for i, aid in columns.items():
            if row[i].strip():
                value = float(row[i].replace(",", "."))  # decimal_comma_to_period
                assert 0 <= value <= float(points[i]) and re.fullmatch(r"\d+(\.\d{1,2})?", row[i]), row[i]
                grades[aid] = value
        out[int(row[1])] = grades
    return out


# -- building a class -------------------------------------------------------------------------
def results(scores, status="graded", people=None, assignment="scaled_dot_product", flags=None):
    tests = [{"name": q, "score": float(s), "max_score": float(QUESTIONS[q])} for q, s in scores.items()]
    extra = {"status": status, "submitters": people or [], "flags": flags or {}}
    return {"score": sum(t["score"] for t in tests), "tests": tests, "assignment": assignment, "extra_data": extra}


def graded_folder(tmp_path, subs):
    """OUT as `grade` writes it, for {id: results}."""
    cfg = config.load(ROOT / "grading.yml")
    out = tmp_path / "out"
    for sid, data in subs.items():
        write_result(out, sid, data, cfg)
    return out


def moodle_person(name, pid):
    return [{"name": name, "email": "", "sid": "", "lms": "moodle", "lms_id": str(pid)}]


def worksheet(strings, students, maximum):
    """A Moodle grading worksheet as "Download grading worksheet" writes it (columns in the site's language)."""
    pt = strings is PT_BR
    header = [
        strings["recordid"],
        "Nome completo" if pt else "Full name",
        "Endereço de email" if pt else "Email address",
        "Status",
        strings["grade"],
        "Nota máxima" if pt else "Maximum Grade",
        "Nota pode ser alterada" if pt else "Grade can be changed",
        "Última modificação (envio)" if pt else "Last modified (submission)",
        strings["modified"],
        strings["comments"],
    ]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for pid, name, email in students:
        w.writerow(
            [f"{strings['hiddenuser']}{pid}", name, email, "Enviado para avaliação", "", maximum, "Sim", "-", "-", ""]
        )
    return buf.getvalue()


# -- the layouts ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "component, kind, name, ident",
    [
        ("Ana Souza_123456_assignsubmission_file", "moodle", "Ana Souza", "123456"),  # folders, Moodle 4.1+
        ("Ana Souza_123456_assignsubmission_file_", "moodle", "Ana Souza", "123456"),  # folders, 3.1-4.0
        ("José da Silva_77_assignsubmission_file_atencao 1.ipynb", "moodle", "José da Silva", "77"),  # flat
        ("Participant_55_assignsubmission_file_", "moodle", "Participant", "55"),  # anonymous marking
        ("souzaana_4455_99887_attention.ipynb", "canvas", "souzaana", "4455"),
        ("souzaana_LATE_4455_99887_attention-1.ipynb", "canvas", "souzaana", "4455"),
        ("souza-ana-late_4455_99887_attention.ipynb", "canvas", "souza-ana", "4455"),
    ],
)
def test_each_layout_gives_the_student_and_the_lms_id(component, kind, name, ident):
    found = layouts.parse(component)
    assert (found["kind"], found["name"], found["id"]) == (kind, name, ident)
    assert layouts.parse("Ana_1_assignsubmission_onlinetext_") is None  # not a file submission
    assert layouts.parse("hw.ipynb") is None


def test_the_lms_name_comes_before_anything_the_student_named():
    """A student's own folder or file named as another student's stays theirs."""
    ana = "Ana Souza_101_assignsubmission_file"
    assert layouts.identity_of([ana, "Bruno Lima_102_assignsubmission_file", "x.ipynb"])["id"] == "101"
    assert layouts.identity_of([ana + "_Bruno Lima_102_assignsubmission_file_x.ipynb"])["id"] == "101"
    assert layouts.identity_of(["souzaana_5002_9002_limacarla_5001_9001_x.ipynb"])["id"] == "5002"
    # a course's folder named like a Canvas file names nobody: Canvas's download is flat
    assert layouts.identity_of(["turma_2026_1_notas", "hw.ipynb"]) is None


def _nb(name="reference.ipynb"):
    return (EXAMPLES / name).read_bytes()


def _zip(path, members):
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def test_a_class_zip_is_told_from_a_students_export_zip_and_graded_as_the_files_it_holds(tmp_path):
    moodle = _zip(
        tmp_path / "ATT-2026-Tarefa 1-42.zip",
        {
            "Ana Souza_101_assignsubmission_file/atencao.ipynb": _nb(),
            "Bruno Lima_102_assignsubmission_file/sub/atencao.ipynb": _nb("template.ipynb"),
            "Bruno Lima_102_assignsubmission_onlinetext/onlinetext.html": b"<p>oi</p>",
            "__MACOSX/Ana Souza_101_assignsubmission_file/._atencao.ipynb": b"junk",
            "../escape_103_assignsubmission_file/x.ipynb": _nb(),  # never written outside its folder
        },
    )
    otter = _zip(tmp_path / "hw-export.zip", {"hw.ipynb": _nb(), ".OTTER_LOG": b"log"})
    canvas = _zip(tmp_path / "submissions.zip", {"limacarla_LATE_5001_9001_atencao.ipynb": _nb()})
    assert (layouts.class_zip(moodle), layouts.class_zip(otter), layouts.class_zip(canvas)) == (
        "moodle",
        None,
        "canvas",
    )

    out = tmp_path / "out"
    said = []
    paths, zips = layouts.expand([moodle, otter, canvas], out, 64 << 20, said.append)
    found = collect(paths, out, zips)
    rels = sorted("/".join(f.rel) for f in found)
    assert rels == [
        "Ana Souza_101_assignsubmission_file/atencao.ipynb",
        "Bruno Lima_102_assignsubmission_file/sub/atencao.ipynb",
        "hw-export.zip",
        "limacarla_LATE_5001_9001_atencao.ipynb",
    ]
    assert all(Path(f.path).resolve().is_relative_to(out.resolve()) for f in found if f.path.name != "hw-export.zip")
    people = layouts.identities(found, said.append)
    by_rel = {"/".join(f.rel): people.get(f) for f in found}
    assert by_rel["Ana Souza_101_assignsubmission_file/atencao.ipynb"][0] == {
        "name": "Ana Souza", "email": "", "sid": "", "lms": "moodle", "lms_id": "101"}  # fmt: skip
    assert by_rel["limacarla_LATE_5001_9001_atencao.ipynb"][0]["late"] == "yes"
    assert by_rel["hw-export.zip"] is None  # a student's own zip, given by name, names nobody
    assert said == []
    # unpacked again (a second run, --resume): the same real paths and bytes, so each result is kept
    again = collect(layouts.expand([moodle, otter, canvas], out, 64 << 20, said.append)[0], out, zips)
    assert [(f.real, sha256_of(f.path)) for f in again] == [(f.real, sha256_of(f.path)) for f in found]


def test_a_students_zip_named_inside_like_a_class_download_stays_that_students_file(tmp_path):
    """Only a zip given by name is a class download: a student's upload found in a folder (here one
    that files a notebook under another student's Moodle name) is graded as theirs, never unpacked."""
    download = tmp_path / "download"
    ana = download / "Ana Souza_101_assignsubmission_file"
    ana.mkdir(parents=True)
    _zip(ana / "atencao.zip", {"Bruno Lima_102_assignsubmission_file/atencao.ipynb": _nb()})
    assert layouts.class_zip(ana / "atencao.zip") == "moodle"  # as a zip given by name it would be one
    out = tmp_path / "out"
    paths, zips = layouts.expand([download], out, 64 << 20, print)
    found = collect(paths, out, zips)
    assert ["/".join(f.rel) for f in found] == ["Ana Souza_101_assignsubmission_file/atencao.zip"]
    assert [p["lms_id"] for p in layouts.identities(found, print)[found[0]]] == ["101"]
    assert not (out / layouts.UNPACKED).exists()


def test_a_folder_only_partly_named_as_a_download_gives_no_names_and_says_so(tmp_path):
    (tmp_path / "c").mkdir()
    for name in ("souzaana_1_2_a.ipynb", "hw_2024_01_b.ipynb", "notas.ipynb"):
        (tmp_path / "c" / name).write_bytes(b"{}")
    said = []
    assert layouts.identities(collect([tmp_path / "c"]), said.append) == {}
    assert len(said) == 1 and "2 of 3 files are named as in an LMS download" in said[0]


# -- Moodle: the worksheet and the feedback zip -----------------------------------------------
def _moodle_class(tmp_path, strings, maximum):
    subs = {
        "ana": results(
            {"by_hand": 2, "causal_mask": 2, "padding_mask": 1, "scaled_dot_product_attention": 4},
            people=moodle_person("Ana Souza", 101),
        ),  # fmt: skip
        "bruno": results(
            {"by_hand": 0, "causal_mask": 0, "padding_mask": 0, "scaled_dot_product_attention": 0},
            people=moodle_person("Bruno Lima", 102),
            flags={"not_run": "the cells stopped at cell 3"},
        ),  # fmt: skip
        "carla-1": results({q: 2 for q in QUESTIONS}, people=moodle_person("Carla Dias", 103)),
        "carla-2": results({q: 1 for q in QUESTIONS}, people=moodle_person("Carla Dias", 103)),
        "davi": results({q: 0 for q in QUESTIONS}, status="not_graded", people=moodle_person("Davi Reis", 104)),
        # a Gradescope-style name alone: two "Eva Melo" in the roster -> refused
        "eva": results({q: 1 for q in QUESTIONS}, people=[{"name": "Eva Melo", "email": "", "sid": ""}]),
        "stranger": results({q: 1 for q in QUESTIONS}, people=moodle_person("Ze Ninguem", 999)),
    }
    out = graded_folder(tmp_path, subs)
    students = [
        (101, "Ana Souza", "ana@usp.br"),
        (102, "Bruno Lima", "bruno@usp.br"),
        (103, "Carla Dias", "carla@usp.br"),
        (104, "Davi Reis", "davi@usp.br"),
        (105, "Eva Melo", "eva1@usp.br"),
        (106, "Eva Melo", "eva2@usp.br"),
        (107, "Fábio Nunes", "fabio@usp.br"),
    ]
    roster = tmp_path / "worksheet.csv"
    roster.write_text("\ufeff" + worksheet(strings, students, maximum), encoding="utf-8")
    return out, roster


def test_a_pt_br_worksheet_comes_back_as_moodle_imports_it(tmp_path):
    out, roster = _moodle_class(tmp_path, PT_BR, "10,00")
    status, paths, lines = roundtrip.run(roster, load.load(out).submissions, out, "pt-BR", None)
    assert status == 0
    sheet = (out / writeback.WORKSHEET_NAME).read_text(encoding="utf-8")
    original = roster.read_text(encoding="utf-8")
    assert sheet.splitlines()[0] == original.splitlines()[0]  # its own headers, BOM and all
    imported = moodle_import(sheet, PT_BR, range(101, 108), 10.0)
    assert set(imported) == {101, 102}  # Ana (9/12) and Bruno (0/12): a grade out of 10 with a decimal comma
    assert imported[101][0] == 7.5 and imported[102][0] == 0.0
    assert '"7,50"' in sheet  # a decimal comma inside a comma-separated file: a quoted cell
    assert imported[101][1].startswith("Correção automática: nota 7,50 de 10,00 (9 de 12 pontos). Por questão:")
    assert "padding_mask 1/2" in imported[101][1]
    assert imported[102][1].endswith("Parte do notebook não pôde ser executada: a nota conta o que rodou.")
    # untouched rows: as read, cell for cell
    back, before = list(csv.reader(io.StringIO(sheet))), list(csv.reader(io.StringIO(original)))
    assert [r for r in back if r[0][12:] not in ("101", "102")] == [
        r for r in before if r[0][12:] not in ("101", "102")
    ]
    said = "\n".join(lines)
    assert "Carla Dias (Participante103): 2 submissões (carla-1, carla-2)" in said
    assert "eva: 2 estudantes da lista têm o mesmo name Eva Melo" in said
    assert "Davi Reis (Participante104): davi ficou sem nota (not_graded)" in said
    assert "stranger: nenhum estudante da lista (Ze Ninguem)" in said
    missing = [line for line in lines if line.startswith("não entregou")]
    assert missing == ["não entregou: Eva Melo (Participante105)", "não entregou: Eva Melo (Participante106)",
                       "não entregou: Fábio Nunes (Participante107)"]  # fmt: skip
    table = list(csv.DictReader(io.StringIO((out / roundtrip.MATCH_NAME).read_text(encoding="utf-8"))))
    assert {r["lms_id"] or r["submission"]: r["status"] for r in table} == {
        "101": "written", "102": "written", "103": "refused", "104": "not_graded", "105": "missing",
        "106": "missing", "107": "missing", "eva": "refused", "stranger": "not_in_roster"}  # fmt: skip
    # the feedback files, in the folders Moodle's zip importer files under each participant
    assert moodle_feedback_import(out / writeback.FEEDBACK_ZIP_NAME, range(101, 108)) == {
        101: "feedback.html", 102: "feedback.html", 104: "feedback.html"}  # fmt: skip
    with zipfile.ZipFile(out / writeback.FEEDBACK_ZIP_NAME) as zf:
        assert (
            zf.read("Ana Souza_101_assignfeedback_file_/feedback.html") == (out / "ana" / "feedback.html").read_bytes()
        )


def test_an_english_worksheet_on_a_scale_of_100_and_the_report_command(tmp_path, capsys):
    out, roster = _moodle_class(tmp_path, EN, "100.00")
    args = cli.main(["report", str(out), "--roster", str(roster), "--lang", "en"], parse_only=True)
    options = {k: v for k, v in vars(args).items() if k != "verb"}
    assert report.main(**options) == 0
    err = capsys.readouterr().err
    assert "worksheet.csv: 3 of 7 students matched to a submission (Moodle); 2 grades written" in err
    assert "did not submit: Fábio Nunes (Participant 107)" in err
    imported = moodle_import((out / writeback.WORKSHEET_NAME).read_text(encoding="utf-8"), EN, range(101, 108), 100)
    assert imported[101][0] == 75.0 and imported[101][1].startswith("Autograded: 75.00 out of 100.00 (9 of 12 points)")
    assert not (out / "moodle.csv").exists()  # the roster's own file, not the generic export
    # the report's "needs a look" lists the roster's students with no submission
    people = load.load(out).not_submitted
    assert sorted((p.name, p.sid, p.assignment) for p in people) == [
        ("Eva Melo", "105", "scaled_dot_product"), ("Eva Melo", "106", "scaled_dot_product"),
        ("Fábio Nunes", "107", "scaled_dot_product")]  # fmt: skip
    assert "Fábio Nunes" in (out / "report.html").read_text(encoding="utf-8")
    # after a regrade, only the rows whose score moved (changes.csv) go back
    assert report.main(out_dir=str(out), roster=str(roster), lang="en", changed_only=True) == 2
    assert "this folder has no changes.csv" in capsys.readouterr().err
    (out / "changes.csv").write_text("id,student,question,old_score,new_score,why\nbruno,,padding_mask,1,2,x\n")
    assert report.main(out_dir=str(out), roster=str(roster), lang="en", changed_only=True) == 0
    assert "1 grades written" in capsys.readouterr().err
    imported = moodle_import((out / writeback.WORKSHEET_NAME).read_text(encoding="utf-8"), EN, range(101, 108), 100)
    assert set(imported) == {102}
    assert report.main(out_dir=str(out), roster=str(roster), export=["canvas"], lang="en") == 2
    assert "is Moodle's, but --export canvas was asked for" in capsys.readouterr().err
    write_result(out, "other", results({}, assignment="multi_head"), config.load(ROOT / "grading.yml"))
    assert report.main(out_dir=str(out), roster=str(roster), lang="en") == 2
    assert "this folder holds 2 assignments (multi_head, scaled_dot_product)" in capsys.readouterr().err


@pytest.mark.parametrize(
    "text, message",
    [
        ("Nome,Nota\nAna,1\n", "neither Moodle's grading worksheet"),
        ("Identificador,Nome completo,Nota\nParticipante1,Ana,\n", "needs its column Last modified (grade)"),
        ("Identifier,Grade,Maximum grade,Last modified (grade)\nsomeone,,10,-\n", "ends in no participant number"),
        ("Identifier,Grade,Scale,Last modified (grade)\nParticipant 1,,A,-\n", "grades on a scale"),
        ("Student,ID,SIS User ID,SIS Login ID,Section,A (1),B (2)\n", "2 assignment columns"),
    ],
)
def test_a_roster_that_cannot_be_used_is_one_line(tmp_path, text, message):
    path = tmp_path / "r.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(roster_mod.RosterError, match=re.escape(message)) as err:
        roster_mod.read(path, ["scaled_dot_product"])
    assert "\n" not in str(err.value)


# -- Canvas: the gradebook CSV ------------------------------------------------------------------
CANVAS_GRADEBOOK = """Student,ID,SIS User ID,SIS Login ID,Section,Scaled dot-product attention and masks (777),Quiz 1 (778),Current Score,Final Score
    Points Possible,,,,,20.00,5.00,(read only),(read only)
,,,,,Manual Posting,,,
"Lima, Carla",5001,2026001,carla@usp.br,ATT-2026,,4.00,80.00,80.00
"Souza, Ana",5002,2026002,ana@usp.br,ATT-2026,,5.00,100.00,100.00
"Test, Student",5003,,,ATT-2026,,,,
"""


def test_canvas_gradebook_comes_back_as_canvas_imports_it(tmp_path):
    person = lambda n, i: [{"name": n, "email": "", "sid": "", "lms": "canvas", "lms_id": str(i)}]  # noqa: E731
    out = graded_folder(
        tmp_path,
        {
            "limacarla_LATE_5001_9001_atencao": results(
                {q: QUESTIONS[q] for q in QUESTIONS}, people=person("limacarla", 5001)
            ),
            "souzaana_5002_9002_atencao": results(
                {"by_hand": 1, "causal_mask": 2, "padding_mask": 2, "scaled_dot_product_attention": 3},
                people=person("souzaana", 5002),
            ),  # fmt: skip
        },
    )
    roster = tmp_path / "gradebook.csv"
    roster.write_text(CANVAS_GRADEBOOK, encoding="utf-8")
    status, paths, lines = roundtrip.run(
        roster, load.load(out).submissions, out, "en", ["canvas"], ["Scaled dot-product attention and masks"]
    )
    assert status == 0, lines
    text = (out / writeback.CANVAS_NAME).read_text(encoding="utf-8")
    assert canvas_import(text, {5001, 5002, 5003}) == {
        5001: {777: 20.0, 778: 4.0},
        5002: {777: 13.33, 778: 5.0},
        5003: {},
    }
    back = list(csv.reader(io.StringIO(text)))
    assert back[0] == next(csv.reader(io.StringIO(CANVAS_GRADEBOOK)))  # its header, the assignment's (id) with it
    assert [r[:5] for r in back[3:]] == [r[:5] for r in csv.reader(io.StringIO(CANVAS_GRADEBOOK))][3:]  # SIS ids
    assert lines[-1] == "did not submit: Test, Student (5003)"


# -- one class graded for real ------------------------------------------------------------------
@pytest.mark.slow
def test_grade_a_moodle_class_in_both_layouts_and_a_canvas_zip_then_write_them_back(tmp_path, capsys):
    moodle_zip = _zip(
        tmp_path / "ATT-Tarefa 1-42.zip",
        {
            "Ana Souza_101_assignsubmission_file/atencao.ipynb": _nb("reference.ipynb"),
            "Bruno Lima_102_assignsubmission_file/atencao.ipynb": _nb("template.ipynb"),
        },
    )
    flat = tmp_path / "flat"  # "Download submissions in folders" off, unzipped
    flat.mkdir()
    (flat / "Carla Dias_103_assignsubmission_file_atencao.ipynb").write_bytes(_nb("causal_mask_triu_pt-BR.ipynb"))
    out = tmp_path / "moodle-out"
    proc = run_cli("grade", moodle_zip, flat, "--out", out, "--assignment", "scaled_dot_product", "--no-progress",
                   "--jobs", "2", check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = {r["name"]: r for r in csv.DictReader((out / "grades.csv").open(encoding="utf-8"))}
    assert set(rows) == {"Ana Souza", "Bruno Lima", "Carla Dias"}
    data = json.loads((out / rows["Ana Souza"]["id"] / "results.json").read_text(encoding="utf-8"))
    assert data["extra_data"]["submitters"] == moodle_person("Ana Souza", 101)
    sheet = tmp_path / "worksheet.csv"
    sheet.write_text(worksheet(PT_BR, [(101, "Ana Souza", ""), (102, "Bruno Lima", ""), (103, "Carla Dias", ""),
                                       (104, "Davi Reis", "")], "10,00"), encoding="utf-8")  # fmt: skip
    assert report.main(out_dir=str(out), roster=str(sheet), lang="pt-BR") == 0
    assert "não entregou: Davi Reis (Participante104)" in capsys.readouterr().err
    imported = moodle_import((out / writeback.WORKSHEET_NAME).read_text(encoding="utf-8"), PT_BR, range(101, 105), 10)
    assert imported[101][0] == 10.0 and imported[102][0] == 0.0 and 0 < imported[103][0] < 10
    assert set(moodle_feedback_import(out / writeback.FEEDBACK_ZIP_NAME, range(101, 105))) == {101, 102, 103}

    canvas_zip = _zip(tmp_path / "submissions.zip", {"souzaana_LATE_5002_9002_atencao.ipynb": _nb("reference.ipynb")})
    out = tmp_path / "canvas-out"
    proc = run_cli("grade", canvas_zip, "--out", out, "--assignment", "scaled_dot_product", "--no-progress",
                   check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    book = tmp_path / "gradebook.csv"
    book.write_text(CANVAS_GRADEBOOK, encoding="utf-8")
    assert report.main(out_dir=str(out), roster=str(book), export=["canvas"], lang="en") == 0
    got = canvas_import((out / writeback.CANVAS_NAME).read_text(encoding="utf-8"), {5001, 5002, 5003})
    assert got[5002][777] == 20.0 and 777 not in got[5001]
    assert "did not submit: Lima, Carla (5001)" in capsys.readouterr().err
