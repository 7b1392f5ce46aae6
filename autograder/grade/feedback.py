"""Per-student feedback files beside each results.json: feedback.md and feedback.html.

Both hold the text Gradescope shows: the submission's `output`, then each
test's name and `output`, as results.json has them (Markdown), under a title,
the submission's id, its submitters where known and its score (labels from the
message catalog, in the feedback's language). feedback.html is one
self-contained page (no script, no outside resource; a Content-Security-Policy
that allows none) in that language (`<html lang=...>`).

The judge's Markdown is a small subset: paragraphs (blank lines between),
`**bold**` and backslash escapes (every character of student text that
Markdown or HTML would act on is escaped: `autograder.judge.text.markdown`).
`render` turns exactly that subset into HTML; everything else comes out as
literal, HTML-escaped text, so nothing in a message can become markup.
"""

import html
import re
import string

from autograder import messages, release
from autograder.messages import t

MD_NAME, HTML_NAME = "feedback.md", "feedback.html"
_PUNCT = frozenset(string.punctuation)  # what a backslash escapes (CommonMark: ASCII punctuation)
_ACTIVE = frozenset("\\`*_[]<>#!|~")  # what Markdown or HTML could act on in a line of plain text
_PARAGRAPHS = re.compile(r"\n[ \t]*(?:\n[ \t]*)+")
_STRONG = object()  # a `**` in the token stream

_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;"
    "line-height:1.45;color:#1b1b1b}h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:1.6rem;"
    "border-bottom:1px solid #ddd}p{margin:.45rem 0;overflow-wrap:anywhere}.meta{color:#555}"
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
    """HTML for the judge's Markdown subset: paragraphs, **bold**, backslash escapes."""
    paragraphs = [p.strip() for p in _PARAGRAPHS.split(str(md).replace("\r\n", "\n"))]
    return "\n".join(f"<p>{_inline(p)}</p>" for p in paragraphs if p)


def md_escape(text):
    """Plain text (an id, a student's name) as Markdown that shows it as written."""
    return "".join("\\" + c if c in _ACTIVE else c for c in str(text))


# -- the files ----------------------------------------------------------------------
def _parts(sid, data, title, released=False):
    """(language, heading, [plain meta lines], [Markdown bodies], [(question, Markdown)])."""
    ed = data.get("extra_data") or {}
    lang = messages.normalize(ed["language"]) if ed.get("language") in messages.LANGUAGES else messages.current()
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
        meta.append(t("feedback_score", score=f"{float(data.get('score') or 0):g}", max=f"{total:g}"))
    bodies = [str(data["output"])] if data.get("output") else []
    questions = release.shown(data.get("tests"), released)
    return lang, heading, meta, bodies, questions


def markdown(sid, data, title=None, released=False):
    """feedback.md: the title, the meta lines, the output and each test's name and output: those a
    student sees at submission, or (`released`) after the deadline (`release.shown`)."""
    lang, heading, meta, bodies, questions = _parts(sid, data, title, released)
    out = [f"# {md_escape(heading)}", *[md_escape(m) for m in meta], *bodies]
    for name, body in questions:
        out += [f"## {md_escape(name)}", body]
    return "\n\n".join(x for x in out if x) + "\n"


def page(sid, data, title=None, released=False):
    """feedback.html: the same text as `markdown`, as one self-contained page."""
    lang, heading, meta, bodies, questions = _parts(sid, data, title, released)
    e = html.escape
    body = [f"<h1>{e(heading)}</h1>", *[f'<p class="meta">{e(m)}</p>' for m in meta], *map(render, bodies)]
    for name, text in questions:
        body += [f"<h2>{e(name)}</h2>", render(text)]
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="{e(lang)}">\n<head>\n<meta charset="utf-8">\n'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{e(heading)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n<main>\n"
        + "\n".join(x for x in body if x)
        + "\n</main>\n</body>\n</html>\n"
    )
