"""The similar-submissions section of the class report and its page beside it (similar.html):
what `similar.compare` found, shown as evidence to read, never as a verdict.

Both are self-contained HTML (inline CSS, no script, nothing fetched); every piece of a
student's code or id is HTML-escaped. The section lists the pairs per assignment with a link
to the page; the page shows each pair's functions side by side, the lines holding shared
code marked.
"""

from html import escape

from autograder.messages import number, t
from autograder.report import similar

PAGE_NAME = "similar.html"
CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:2rem auto;max-width:76rem;
color:#222;line-height:1.4;padding:0 1rem}
h1{font-size:1.6rem}h2{font-size:1.3rem;border-bottom:2px solid #ddd;margin-top:2.2rem}h3{font-size:1.05rem}
.side{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:.8rem;margin:.4rem 0 1.2rem}.side>div{min-width:0}
.side pre{margin:0;padding:.5rem;background:#f7f7f7;border:1px solid #e2e2e2;overflow-x:auto;font-size:.8rem}
.side .who{font-weight:600;font-size:.85rem;margin-bottom:.2rem}
.shared{background:#fff1b8;display:block}
"""


def _pairs_table(pairs, lang, link):
    heads = (t("similar_pair", lang), t("similar_similarity", lang), t("similar_functions", lang), "")
    rows = []
    for n, p in pairs:
        shares = ", ".join(f"{escape(f)} {share:.2f}" for f, (share, _, _) in p.functions.items())
        rows.append(
            f'<tr data-pair="{n}"><td><code>{escape(p.a)}</code> · <code>{escape(p.b)}</code></td>'
            f'<td class="n">{p.similarity:.2f}</td><td>{shares}</td>'
            f'<td><a href="{escape(link)}#p{n}">{escape(t("similar_side_by_side", lang))}</a></td></tr>'
        )
    return "<table><tr>" + "".join(f"<th>{escape(h)}</th>" for h in heads) + "</tr>" + "".join(rows) + "</table>"


def _numbered(found):
    """[(assignment, n_compared, [(pair number, Pair)])], numbered across the whole page."""
    out, n = [], 0
    for assignment, (count, pairs) in sorted(found.items()):
        numbered = []
        for p in pairs:
            numbered.append((n, p))
            n += 1
        out.append((assignment, count, numbered))
    return out


def section(found, lang, link=PAGE_NAME, unsubtracted=()):
    """The report's section from {assignment: (submissions compared, [Pair])}; `unsubtracted`:
    the assignments compared without their starter code (no student template here)."""
    parts = [
        f'<section id="similar" data-similar><h2>{escape(t("similar_title", lang))}</h2>',
        f"<p>{escape(t('similar_intro', lang, threshold=number(similar.THRESHOLD, 'g')))}</p>",
    ]
    if not found:
        parts.append(f'<p class="muted">{escape(t("similar_no_code", lang))}</p>')
    for assignment, count, pairs in _numbered(found):
        parts.append(f"<p>{escape(t('similar_compared', lang, assignment=assignment, n=count, pairs=len(pairs)))}</p>")
        if assignment in unsubtracted:
            parts.append(f'<p class="muted">{escape(t("similar_no_starter", lang))}</p>')
        parts.append(
            _pairs_table(pairs, lang, link) if pairs else f'<p class="muted">{escape(t("similar_none", lang))}</p>'
        )
    parts.append("</section>")
    return "\n".join(parts)


def _code(source, marked):
    lines = similar.canonical(source).split("\n")
    return "".join(
        f'<span class="shared">{escape(line) or " "}</span>' if i in marked else escape(line) + "\n"
        for i, line in enumerate(lines, 1)
    )


def page(found, sources, lang):
    """similar.html: every listed pair, each function both wrote side by side. `sources`:
    {assignment: {id: {function: source}}}."""
    title = t("similar_title", lang)
    body = [f"<h1>{escape(title)}</h1>", f"<p>{escape(t('similar_page_intro', lang))}</p>"]
    for assignment, _, pairs in _numbered(found):
        body.append(f"<h2>{escape(assignment)}</h2>")
        for n, p in pairs:
            body.append(
                f'<section id="p{n}" data-pair="{n}"><h3><code>{escape(p.a)}</code> · <code>{escape(p.b)}</code>: '
                f"{escape(t('similar_similarity', lang))} {p.similarity:.2f}</h3>"
            )
            for function, (share, lines_a, lines_b) in p.functions.items():
                code_a = sources[assignment][p.a][function]
                code_b = sources[assignment][p.b][function]
                body.append(
                    f'<h4><code>{escape(function)}</code> {share:.2f}</h4><div class="side">'
                    f'<div><div class="who">{escape(p.a)}</div><pre>{_code(code_a, lines_a)}</pre></div>'
                    f'<div><div class="who">{escape(p.b)}</div><pre>{_code(code_b, lines_b)}</pre></div></div>'
                )
            body.append("</section>")
    return (
        f'<!DOCTYPE html>\n<html lang="{escape(lang)}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def build(out_dir, lang):
    """(the report's section, similar.html) of a folder `grade` wrote."""
    classes = similar.folder_class(out_dir)
    found, sources = {}, {}
    unsubtracted = []
    for assignment, (per, starter) in classes.items():
        if per:
            found[assignment] = (len(per), similar.compare(per, starter))
            sources[assignment] = per
            if starter is None:
                unsubtracted.append(assignment)
    return section(found, lang, unsubtracted=unsubtracted), page(found, sources, lang)
