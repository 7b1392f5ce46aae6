"""The class report's summary for the terminal: the same numbers as the page,
fewer rows (the five most failed checks, the five most common causes), every
line printable (student text made one line, `text.one_line`, and no
control character anywhere)."""

from autograder.messages import t
from autograder.report import words
from autograder.text import one_line

TOP = 5


def _n(x, lang):
    return words.num(x, lang=lang) if x is not None else t("report_na", lang)


def lines(folder, assignments, lang):
    assignments = [a for a in assignments if a.name is not None]  # the rest are all under "needs a look"
    out = [
        t("report_title", lang),
        t("report_intro", lang, submissions=len(folder.submissions), assignments=len(assignments)),
    ]
    for a in assignments:
        s = a.summary
        out += ["", t("report_assignment", lang, name=a.name)]
        if a.scored:
            out.append(
                "  "
                + ", ".join(
                    [
                        f"{t('report_count', lang)} {s.count}",
                        f"{t('report_left_out', lang)} {a.left_out}",
                        f"{t('report_mean', lang)} {_n(s.mean, lang)} {t('report_out_of', lang)} {words.num(s.maximum, lang=lang)}",
                        f"{t('report_median', lang)} {_n(s.median, lang)}",
                        f"{t('report_sd', lang)} {_n(s.sd, lang)}",
                        f"{t('report_at_zero', lang)} {words.pct(s.at_zero)}",
                        f"{t('report_at_full', lang)} {words.pct(s.at_full)}",
                    ]
                )
            )
            width = max(len(q.name) for q in a.questions)
            heads = [
                t(k, lang) for k in ("report_mean", "report_full_credit", "report_difficulty", "report_discrimination")
            ]
            out.append(f"  {t('report_question', lang):<{width}}  " + "  ".join(f"{h:>14}" for h in heads))
            for q in a.questions:
                mean = f"{_n(q.mean, lang)}/{words.num(q.maximum, lang=lang)}"
                cells = [mean, words.pct(q.full_credit) or "", _n(q.difficulty, lang), _n(q.discrimination, lang)]
                out.append(f"  {q.name:<{width}}  " + "  ".join(f"{c:>14}" for c in cells))
        failed = [c for c in a.checks if c.failing][:TOP]
        if failed:
            out.append(f"  {t('report_checks', lang)}:")
            out += [
                f"    {words.pct(c.share):>4}  {c.failing}/{c.of}  {c.question}: {words.check_label(c.check, lang)}"
                for c in failed
            ]
        if a.causes:
            out.append(f"  {t('report_causes', lang)}:")
            for c in a.causes[:TOP]:
                out.append(
                    f"    {c.count} ({words.pct(c.share)}) [{', '.join(c.questions)}] "
                    f"{one_line(words.cause_text(c, lang), 160)}"
                )
    look = [(t("report_folder", lang), words.reason(p, lang)) for p in folder.problems]
    look += [(s.id, words.reasons(s.reasons, lang)) for s in folder.submissions if s.reasons]
    look += [(p.name or p.sid or p.email, t("report_look_not_submitted", lang)) for p in folder.not_submitted]
    if folder.changes:
        n = len({r["id"] for r in folder.changes})
        out += ["", f"{t('report_changes', lang)}: {n} {t('report_submissions', lang)}"]
    out += ["", f"{t('report_look', lang)}: {len(look)}"]
    out += [f"  {one_line(i, 100)}: {one_line(r, 300)}" for i, r in look]
    return ["".join(ch if ch.isprintable() else " " for ch in line) for line in out]  # names from results.json
