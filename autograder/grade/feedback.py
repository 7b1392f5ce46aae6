"""Per-student feedback files beside each results.json: feedback.md and feedback.html.

Both hold the text Gradescope shows: the submission's `output`, then each
test's name and `output`, as results.json has them (Markdown), under a title,
the submission's id, its submitters where known and its score (labels from the
message catalog, in the feedback's language). feedback.html is one
self-contained page (no script, no outside resource; a Content-Security-Policy
that allows none) in that language (`<html lang=...>`).

The judge's Markdown is a small subset: paragraphs (blank lines between),
`**bold**`, backslash escapes (every character of student text that Markdown or
HTML would act on is escaped: `autograder.text.markdown`) and fenced code
blocks (a counterexample's lines, `autograder.text.Code`). `render` turns
exactly that subset into HTML; everything else comes out as literal,
HTML-escaped text, so nothing in a message can become markup.

feedback.html marks each question passed, partly passed or failed (from its
score), and, where the question's view shows every check (level `all`), each
check with its cases failed (from results.json's `extra_data.checks`): a mark
and a word, so it reads without colour too.
"""

import html
import re
import string

from autograder import messages, release
from autograder.messages import check_label, number, t

MD_NAME, HTML_NAME = "feedback.md", "feedback.html"
_PUNCT = frozenset(string.punctuation)  # what a backslash escapes (CommonMark: ASCII punctuation)
_ACTIVE = frozenset("\\`*_[]<>#!|~")  # what Markdown or HTML could act on in a line of plain text
_PARAGRAPHS = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")
_STRONG = object()  # a `**` in the token stream

_FENCE = re.compile(r"(`{3,})\n(.*)\n\1", re.S)  # a whole paragraph that is one fenced code block
PASS, PART, FAIL = "pass", "part", "fail"
_MARKS = {PASS: "\u2713", PART: "\u25d0", FAIL: "\u2717"}  # check mark, half circle, ballot x

_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;"
    "line-height:1.45;color:#1b1b1b}h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:1.6rem;"
    "border-bottom:1px solid #ddd;display:flex;gap:.5rem;align-items:baseline}"
    "h2 .pts{margin-left:auto;font-weight:normal;color:#444}"
    "p{margin:.45rem 0;overflow-wrap:anywhere}.meta{color:#555}"
    ".mark{display:inline-block;min-width:1.4em;text-align:center;border-radius:.3em;color:#fff;font-weight:bold}"
    ".pass>.mark,.pass>h2>.mark{background:#1a7f37}.part>.mark,.part>h2>.mark{background:#9a6700}"
    ".fail>.mark,.fail>h2>.mark{background:#cf222e}"
    "ul.checks{list-style:none;padding:0;margin:.5rem 0}ul.checks li{margin:.2rem 0}"
    "pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,'DejaVu Sans Mono',monospace;font-size:.88rem;"
    "background:#f3f4f6;border:1px solid #d0d7de;border-radius:.3rem;padding:.6rem .8rem;"
    "white-space:pre-wrap;overflow-wrap:anywhere}"
)


# -- the Markdown subset ----------------------------------------------------------
def _tokens(text):
    """Literal pieces (escapes resolved) and `_STRONG` markers, in order."""
    out, buf, i = [], [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text) and text[i + 1] in _PUNCT:
            buf.append(text[i + 1])
            i += 2
        elif text.startswith("**", i):
            out += ["".join(buf), _STRONG]
            buf = []
            i += 2
        else:
            buf.append(c)
            i += 1
    out.append("".join(buf))
    return out


def _inline(text):
    """One paragraph: `**` pairs (an opener before a non-space, a closer after one) become
    <strong>; an unpaired `**` stays literal; every other character is escaped."""
    tokens = _tokens(text)
    pairs, opened = set(), None
    for k, tok in enumerate(tokens):
        if tok is not _STRONG:
            continue
        before = tokens[k - 1] if k > 0 else ""
        after = tokens[k + 1] if k + 1 < len(tokens) else ""
        if opened is None:
            if isinstance(after, str) and after[:1].strip():
                opened = k
        elif isinstance(before, str) and before[-1:].strip():
            pairs |= {opened, k}
            opened = None
    out, inside = [], False
    for k, tok in enumerate(tokens):
        if tok is _STRONG and k in pairs:
            out.append("</strong>" if inside else "<strong>")
            inside = not inside
        else:
            out.append(html.escape("**" if tok is _STRONG else tok))
    return "".join(out)


def render(md):
    """HTML for the judge's Markdown subset: paragraphs, **bold**, backslash escapes, fenced
    code blocks (their text literal, in monospace)."""
    out = []
    for p in (p.strip() for p in _PARAGRAPHS.split(str(md).replace("\r\n", "\n"))):
        code = _FENCE.fullmatch(p)
        if code:
            out.append(f'<pre class="code"><code>{html.escape(code.group(2))}</code></pre>')
        elif p:
            out.append(f"<p>{_inline(p)}</p>")
    return "\n".join(out)


def md_escape(text):
    """Plain text (an id, a student's name) as Markdown that shows it as written."""
    return "".join("\\" + c if c in _ACTIVE else c for c in str(text))


# -- the files ----------------------------------------------------------------------
def language(data):
    """The language a submission's feedback is in: its results.json's, else the one in force."""
    ed = data.get("extra_data") or {}
    return messages.normalize(ed["language"]) if ed.get("language") in messages.LANGUAGES else messages.current()


def _parts(sid, data, title, released=False):
    """(language, heading, [plain meta lines], [Markdown bodies], [shown tests]: `release.shown_tests`)."""
    ed = data.get("extra_data") or {}
    lang = language(data)
    with messages.language(lang):
        heading = t("feedback_title", assignment=title or t("feedback_no_assignment"))
        meta = [t("feedback_submission", id=sid)]
        names = [
            s.get("name") or s.get("email") or s.get("sid") for s in ed.get("submitters") or [] if isinstance(s, dict)
        ]
        if any(names):
            meta.append(t("feedback_submitters", names="; ".join(n for n in names if n)))
        tests = release.scored(data.get("tests"))
        total = sum(float(x.get("max_score") or 0) for x in tests)
        meta.append(t("feedback_score", score=number(float(data.get("score") or 0), "g"), max=number(total, "g")))
    bodies = [str(data["output"])] if data.get("output") else []
    return lang, heading, meta, bodies, release.shown_tests(data.get("tests"), released)


def markdown(sid, data, title=None, released=False):
    """feedback.md: the title, the meta lines, the output and each test's name and output: those a
    student sees at submission, or (`released`) after the deadline (`release.shown`)."""
    lang, heading, meta, bodies, questions = _parts(sid, data, title, released)
    out = [f"# {md_escape(heading)}", *[md_escape(m) for m in meta], *bodies]
    for q in questions:
        out += [f"## {md_escape(q.get('name', ''))}", str(q.get("output") or "")]
    return "\n\n".join(x for x in out if x) + "\n"


def _number(x):
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def outcome(test):
    """PASS, PART or FAIL for a scored results.json test (its score of its points), or None."""
    score, most = _number(test.get("score")), _number(test.get("max_score"))
    if score is None or most is None:
        return None
    return PASS if score >= most else FAIL if score <= 0 else PART


def _mark(kind, word):
    return f'<span class="mark" role="img" aria-label="{html.escape(word)}" title="{html.escape(word)}">{_MARKS[kind]}</span>'


def _checks(question, records):
    """<ul> of a question's checks, each marked passed or failed with its failed cases, from
    results.json's `extra_data.checks` (plain data the judge wrote)."""
    items = []
    for r in records if isinstance(records, list) else []:
        if not isinstance(r, dict) or r.get("question") != question or not isinstance(r.get("check"), str):
            continue
        failed, cases = _number(r.get("failed")), _number(r.get("cases"))
        if failed is None or cases is None:
            continue
        # a property check that passed but earns only what the values earn (scoring's gate) is half marked
        kind = FAIL if failed else PART if r.get("gated") is True else PASS
        word = t({FAIL: "feedback_check_failed", PART: "feedback_check_gated", PASS: "feedback_check_passed"}[kind])
        count = t("feedback_check_cases", failed=number(failed, "g"), cases=number(cases, "g")) if failed else ""
        count = t("feedback_check_gated_note") if kind == PART else count
        items.append(
            f'<li class="{kind}">{_mark(kind, word)} {html.escape(check_label(r["check"]))}{html.escape(count)}</li>'
        )
    return f'<ul class="checks">{"".join(items)}</ul>' if items else ""


def page(sid, data, title=None, released=False):
    """feedback.html: the same text as `markdown`, as one self-contained page, each question
    marked passed, partly passed or failed, and (where its view shows every check) each check."""
    lang, heading, meta, bodies, questions = _parts(sid, data, title, released)
    e = html.escape
    body = [f"<h1>{e(heading)}</h1>", *[f'<p class="meta">{e(m)}</p>' for m in meta], *map(render, bodies)]
    records = (data.get("extra_data") or {}).get("checks")
    with messages.language(lang):
        for q in questions:
            name, kind = str(q.get("name", "")), outcome(q)
            head = e(name)
            if kind:
                word = t(f"feedback_question_{kind}")
                points = t("feedback_points", score=number(q["score"], "g"), max=number(q["max_score"], "g"))
                head = f'{_mark(kind, word)} <span class="name">{head}</span> <span class="pts">{e(points)}</span>'
            checks = _checks(name, records) if release.level(q) == "all" else ""
            body += [
                f'<section class="question {kind or ""}">',
                f"<h2>{head}</h2>",
                checks,
                render(q.get("output") or ""),
                "</section>",
            ]
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="{e(lang)}">\n<head>\n<meta charset="utf-8">\n'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{e(heading)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n<main>\n"
        + "\n".join(x for x in body if x)
        + "\n</main>\n</body>\n</html>\n"
    )
