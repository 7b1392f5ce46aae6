"""The class report as one self-contained HTML page: inline CSS, SVG and one
short inline script (sorting the student list), no network, nothing that
changes between two runs on the same results (no date, no folder path, every
list in a fixed order). Long tables show their top rows, the rest folded in a
<details> (`TOP_ROWS`).

Each assignment lists its submissions (`table.students`, one `tr[data-row]`
each: its id linked to its feedback page, the student, score, status and the
questions that lost points; every cell's `data-sort` is what a click on its
header sorts by). "Needs a look" holds every submission with a reason (the
kit's faults first, untouched templates among them), and the roster's students
with no submission (`load.NotSubmitted`); "What changed in the last regrade"
shows OUT/changes.csv (`autograder.grade.changes`).

Each number a reader (or the kit's test) checks carries a `data-stat`
attribute inside its assignment's `<section data-assignment=...>`: count,
mean, median, sd, at-zero, at-full; per question row (`data-question`) its
mean, full-credit rate, difficulty and discrimination. Every piece of text
from results.json or grades.csv is HTML-escaped.
"""

from html import escape
from urllib.parse import quote

from autograder import __version__
from autograder.messages import t
from autograder.report import figures, words

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:2rem auto;max-width:68rem;
color:#222;line-height:1.4;padding:0 1rem}
h1{font-size:1.6rem}h2{font-size:1.3rem;border-bottom:2px solid #ddd;padding-bottom:.2rem;margin-top:2.5rem}
h3{font-size:1.05rem;margin-top:1.6rem}
table{border-collapse:collapse;margin:.5rem 0;font-size:.92rem}
th,td{border-bottom:1px solid #e4e4e4;padding:.25rem .6rem;text-align:left;vertical-align:middle}
th{background:#f5f5f5}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.bar{display:inline-block;height:.7rem;background:#4878a8;vertical-align:middle;margin-right:.4rem}
.muted{color:#777}.ids{font-size:.8rem;color:#555;max-width:28rem}
figure{margin:.5rem 0}svg{display:block;max-width:100%;height:auto}
td svg{width:9rem}nav a{margin-right:1rem}footer{margin-top:3rem;font-size:.8rem;color:#666}
code{font-size:.85rem}details{margin:.3rem 0 .8rem}summary{cursor:pointer;color:#345}
table.sortable th{cursor:pointer}th[aria-sort=ascending]::after{content:" \\25B2"}
th[aria-sort=descending]::after{content:" \\25BC"}tr.flag td{background:#fff4e0}
"""
TOP_ROWS = 8  # a longer table shows these, the rest one click away
SORT = """<script>
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th) {
    th.addEventListener("click", function () {
      var i = th.cellIndex, up = th.getAttribute("aria-sort") !== "ascending";
      var rows = Array.prototype.slice.call(table.querySelectorAll("tr[data-row]"));
      table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      rows.sort(function (a, b) {
        var x = a.cells[i].getAttribute("data-sort"), y = b.cells[i].getAttribute("data-sort");
        var c = isNaN(parseFloat(x)) || isNaN(parseFloat(y)) ? x.localeCompare(y) : parseFloat(x) - parseFloat(y);
        return up ? c : -c;
      });
      rows.forEach(function (r) { r.parentNode.appendChild(r); });
    });
  });
});
</script>"""


def _cell(value, stat=None, cls="n", lang=None):
    attr = f' data-stat="{stat}"' if stat else ""
    shown = words.num(value, lang=lang) if isinstance(value, float) else value
    return f'<td class="{cls}"{attr}>{escape(str(shown if shown is not None else "—"))}</td>'


def _na(value, lang, stat):
    text = words.num(value, lang=lang) if value is not None else t("report_na", lang)
    return f'<td class="n" data-stat="{stat}">{escape(text)}</td>'


def _pct(value, stat=None):
    return _cell(words.pct(value), stat)


def _bar(share):
    return f'<span class="bar" style="width:{max(0.0, min(1.0, share)) * 6:.2f}rem"></span>'


def _heads(keys, lang):
    return "<tr>" + "".join(f"<th>{escape(t(k, lang))}</th>" for k in keys) + "</tr>"


def _folded(cls, head, rows, lang, attrs=""):
    """A table of its first TOP_ROWS `rows` (each a `<tr>`), the rest in a <details> below it
    (the same columns), so a long list does not bury the page."""
    table = f'<table class="{cls}"{attrs}>{head}{"".join(rows[:TOP_ROWS])}</table>'
    rest = rows[TOP_ROWS:]
    if not rest:
        return table
    more = escape(t("report_more_rows", lang, n=len(rest)))
    return (
        table
        + f'<details data-folded="{len(rest)}"><summary>{more}</summary>'
        + f'<table class="{cls}">{head}{"".join(rest)}</table></details>'
    )


def _summary(a, lang, n):
    s = a.summary
    heads = [
        t(k, lang)
        for k in (
            "report_count",
            "report_left_out",
            "report_mean",
            "report_median",
            "report_sd",
            "report_at_zero",
            "report_at_full",
            "report_out_of",
        )
    ]
    row = (
        _cell(str(s.count), "count")
        + _cell(str(a.left_out), "left-out")
        + _cell(s.mean, "mean", lang=lang)
        + _cell(s.median, "median", lang=lang)
        + _cell(s.sd, "sd", lang=lang)
        + _pct(s.at_zero, "at-zero")
        + _pct(s.at_full, "at-full")
        + _cell(s.maximum, "max", lang=lang)
    )
    table = f'<table class="summary"><tr>{"".join(f"<th>{escape(h)}</th>" for h in heads)}</tr><tr>{row}</tr></table>'
    fig = figures.histogram(
        s.values,
        s.maximum,
        prefix=f"a{n}-",
        bins=10,
        mean=s.mean,
        xlabel=t("report_score_axis", lang),
        ylabel=t("report_count_axis", lang),
        title=f"{t('report_histogram', lang)}: {t('report_assignment', lang, name=a.name)}",
    )
    return f'<h3>{escape(t("report_scores", lang))}</h3>{table}<figure data-figure="scores">{fig}</figure>'


def _questions(a, lang, n):
    heads = [
        t(k, lang)
        for k in (
            "report_question",
            "report_mean",
            "report_out_of",
            "report_full_credit",
            "report_difficulty",
            "report_discrimination",
            "report_histogram",
        )
    ]
    rows = []
    for m, q in enumerate(a.questions):
        fig = figures.histogram(
            q.values,
            q.maximum,
            prefix=f"a{n}q{m}-",
            bins=5,
            size=(2.4, 1.0),
            title=f"{t('report_histogram', lang)}: {q.name}",
        )
        rows.append(
            f'<tr data-question="{escape(q.name)}"><td><code>{escape(q.name)}</code></td>'
            + _cell(q.mean, "q-mean", lang=lang)
            + _cell(q.maximum, "q-max", lang=lang)
            + _pct(q.full_credit, "q-full")
            + _na(q.difficulty, lang, "q-difficulty")
            + _na(q.discrimination, lang, "q-discrimination")
            + f'<td data-figure="question">{fig}</td></tr>'
        )
    return (
        f'<h3>{escape(t("report_questions", lang))}</h3><table class="questions"><tr>'
        + "".join(f"<th>{escape(h)}</th>" for h in heads)
        + "</tr>"
        + "".join(rows)
        + "</table>"
    )


def _checks(a, lang):
    title = f"<h3>{escape(t('report_checks', lang))}</h3>"
    if not a.checks:
        return title + f'<p class="muted">{escape(t("report_no_checks", lang))}</p>'
    failed = [c for c in a.checks if c.failing]
    head = _heads(("report_question", "report_check", "report_failing", "report_share"), lang)
    rows = [
        f'<tr data-check="{escape(c.question)}::{escape(c.check)}"><td><code>{escape(c.question)}</code></td>'
        f"<td>{escape(words.check_label(c.check, lang))}</td>"
        + _cell(f"{c.failing} / {c.of}", "check-failing")
        + f'<td class="n" data-stat="check-share">{_bar(c.share)}{escape(words.pct(c.share))}</td></tr>'
        for c in failed
    ]
    table = _folded("checks", head, rows, lang) if rows else ""
    rest = len(a.checks) - len(failed)
    note = f'<p class="muted">{escape(t("report_checks_all_pass", lang, n=rest))}</p>' if rest else ""
    return title + table + note


def _causes(a, lang):
    title = f"<h3>{escape(t('report_causes', lang))}</h3>"
    if not a.causes:
        return title + f'<p class="muted">{escape(t("report_no_causes", lang))}</p>'
    head = _heads(("report_cause", "report_submissions", "report_share", "report_questions", "report_ids"), lang)
    rows = [
        f'<tr data-cause="{escape(c.key or "")}"><td>{escape(words.cause_text(c, lang))}</td>'
        + _cell(str(c.count), "cause-count")
        + f'<td class="n" data-stat="cause-share">{_bar(c.share)}{escape(words.pct(c.share))}</td>'
        + f"<td>{', '.join(f'<code>{escape(q)}</code>' for q in c.questions)}</td>"
        + f'<td class="ids">{escape(", ".join(c.ids))}</td></tr>'
        for c in a.causes
    ]
    return title + _folded("causes", head, rows, lang)


def _status(s, lang):
    """(key, words) of a submission's status; an untouched template says so."""
    key = "untouched" if any(k == "report_look_untouched" for k, _ in s.reasons) else s.status
    return key, t(f"report_status_{key}", lang)


def _who(s):
    """A submission's students: each one's name, else student id, else email."""
    return "; ".join(p.get("name") or p.get("sid") or p.get("email") for p in s.identities)


def _lost(s):
    """[(question, points lost)] in the question order, and their sum."""
    lost = [(q, top - got) for q, (got, top) in s.questions.items() if top - got > 1e-9]
    return lost, sum(x for _, x in lost)


def _students(a, lang, base):
    keys = ("report_submission", "report_student", "report_score", "report_status", "report_lost")
    rows = []
    for s in a.submissions:
        key, status = _status(s, lang)
        sid = escape(s.id)
        link = f'<a href="{escape(base + quote(s.id) + "/feedback.html")}">{sid}</a>' if s.feedback else sid
        score = f"{words.num(s.score, lang=lang)} / {words.num(s.max_score, lang=lang)}" if s.score is not None else "—"
        lost, total = _lost(s)
        flag = ' class="flag"' if s.reasons else ""
        rows.append(
            f'<tr data-row data-id="{sid}" data-status="{key}"{flag}>'
            f'<td data-sort="{sid}"><code>{link}</code></td>'
            f'<td data-sort="{escape(_who(s))}">{escape(_who(s))}</td>'
            f'<td class="n" data-sort="{s.score if s.score is not None else -1}">{escape(score)}</td>'
            f'<td data-sort="{escape(status)}">{escape(status)}</td>'
            f'<td data-sort="{total:g}">{", ".join(f"<code>{escape(q)}</code> −{words.num(x, lang=lang)}" for q, x in lost)}</td>'
            "</tr>"
        )
    return (
        f"<h3>{escape(t('report_students', lang))}</h3>"
        f'<p class="muted">{escape(t("report_students_hint", lang))}</p>'
        f'<table class="students sortable">{_heads(keys, lang)}{"".join(rows)}</table>'
    )


def _why(text, lang):
    from autograder.grade import changes

    words_of = {
        changes.SUITES_CHANGED: "report_why_suites",
        changes.SETTINGS_CHANGED: "report_why_settings",
        changes.OLDER_KIT: "report_why_older_kit",
    }
    return "; ".join(t(words_of[w], lang) if w in words_of else w for w in text.split("; "))


def _changes(folder, lang):
    """OUT/changes.csv: the scores the last `grade --resume` moved (nothing when there is none)."""
    if folder.changes is None:
        return ""
    title = f'<h2 id="changes">{escape(t("report_changes", lang))}</h2>'
    n = len({r["id"] for r in folder.changes})
    if not folder.changes:
        return title + f'<p class="muted" data-changes="0">{escape(t("report_changes_none", lang))}</p>'
    keys = ("report_submission", "report_student", "report_question", "report_old_score", "report_new_score")
    head = _heads((*keys, "report_why"), lang)
    rows = [
        f'<tr data-change="{escape(r["id"])}"><td><code>{escape(r["id"])}</code></td><td>{escape(r["student"])}</td>'
        f"<td><code>{escape(r['question'])}</code></td>"
        + "".join(
            _cell(words.num(float(v), lang=lang) if _is_number(v) else v) for v in (r["old_score"], r["new_score"])
        )
        + f"<td>{escape(_why(r['why'], lang))}</td></tr>"
        for r in folder.changes
    ]
    intro = f"<p>{escape(t('report_changes_intro', lang))}</p>"
    return title + intro + _folded("changes", head, rows, lang, f' data-changes="{n}"')


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def _look(folder, lang):
    title = f'<h2 id="look">{escape(t("report_look", lang))}</h2>'
    rows = [("folder", escape(t("report_folder", lang)), "", words.reason(p, lang)) for p in folder.problems]
    # the kit's own faults first: their scores are not final, whatever the rest says
    looked = sorted((s for s in folder.submissions if s.reasons), key=lambda s: s.status != "internal_error")
    rows += [
        (
            _status(s, lang)[0],
            f"<code>{escape(s.id)}</code>",
            escape(s.assignment or ""),
            words.reasons(s.reasons, lang),
        )
        for s in looked
    ]
    rows += [
        (
            "not_submitted",
            escape(p.name or p.sid or p.email),
            escape(p.assignment),
            t("report_look_not_submitted", lang),
        )
        for p in folder.not_submitted
    ]
    if not rows:
        return title + f'<p class="muted" data-stat="look-count" data-n="0">{escape(t("report_look_none", lang))}</p>'
    head = _heads(("report_submission", "report_assignment_column", "report_reason"), lang)
    body = "".join(
        f'<tr data-look data-kind="{k}"><td>{i}</td><td>{a}</td><td>{escape(r)}</td></tr>' for k, i, a, r in rows
    )
    return title + f'<table class="look" data-stat="look-count" data-n="{len(rows)}">{head}{body}</table>'


def render(folder, assignments, lang, base="", extra=""):
    """The report's HTML (text) for a loaded `folder` and its `stats.by_assignment` (submissions
    of no known assignment have no section: they are all under "needs a look"). `base`: the
    graded folder as seen from the page ("" beside it, else a relative path ending in /);
    `extra`: a section of its own (similar submissions: `similar_page.section`) before "needs a look"."""
    assignments = [a for a in assignments if a.name is not None]
    title = t("report_title", lang)
    nav = "".join(
        f'<a href="#a{n}">{escape(t("report_assignment", lang, name=a.name))}</a>' for n, a in enumerate(assignments)
    )
    if folder.changes is not None:
        nav += f'<a href="#changes">{escape(t("report_changes", lang))}</a>'
    nav += f'<a href="#look">{escape(t("report_look", lang))}</a>'
    parts = [
        f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f"<p>{escape(t('report_intro', lang, submissions=len(folder.submissions), assignments=len(assignments)))}</p>",
        f"<nav>{nav}</nav>",
        _changes(folder, lang),
    ]
    for n, a in enumerate(assignments):
        parts.append(
            f'<section id="a{n}" data-assignment="{escape(a.name or "")}">'
            f"<h2>{escape(t('report_assignment', lang, name=a.name))}</h2>"
        )
        if a.scored:
            parts += [_summary(a, lang, n), _questions(a, lang, n)]
        parts.append(_students(a, lang, base))
        parts += [_checks(a, lang), _causes(a, lang), "</section>"]
    if extra:
        parts.append(extra)
    parts.append(_look(folder, lang))
    parts.append(
        f"<footer><p>{escape(t('report_definitions', lang))}</p>"
        f"<p>attention-autograder-kit {escape(__version__)}</p></footer>{SORT}</body></html>\n"
    )
    return "\n".join(parts)
