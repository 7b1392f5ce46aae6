"""The report's words and numbers as text, in the report's language, shared by
the HTML page and the terminal summary (so both say the same thing).

A number in the report's prose and tables reads as its language writes it (`num`
with `lang`: pt-BR's decimal comma, `messages.decimal`); the LMS exports keep the
point (`num` without a language); every label comes from the catalog (`messages/report.yml`); a check's
label from `messages.check_label`; a likely cause with a catalog key is worded
in the report's language with `t(key, lang, **fields)` (the fields of a
submission in that language where there is one; a field that is a message itself,
from its key), else as the student read it.
"""

from autograder import messages
from autograder.messages import MessageError, t

MAX_CAUSE = 400


def num(x, digits=2, lang=None):
    """`x` with at most `digits` decimals, trailing zeros dropped, as `lang` writes it in
    a sentence (None: as code and CSV files write it); None for None."""
    if x is None:
        return None
    text = f"{x:.{digits}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    text = "0" if text in ("-0", "") else text
    return messages.decimal(text, lang) if lang else text


def pct(x):
    return None if x is None else f"{100 * x:.0f}%"


def reason(item, lang):
    """One (key, fields) reason worded in `lang`; a field may itself be a (key, fields) pair."""
    key, fields = item
    fields = {k: reason(v, lang) if isinstance(v, tuple) else v for k, v in fields.items()}
    return t(key, lang, **fields)


def reasons(items, lang):
    return "; ".join(reason(i, lang) for i in items)


def check_label(check, lang):
    from autograder.messages import check_label as label_of

    with messages.language(lang):
        return label_of(check)


def _worded(data, lang):
    """A message given as data ({"key", "fields"}, a field nested the same way: results.json's
    `causes[].field_msgs`) worded in `lang`."""
    fields = {k: _worded(v, lang) if isinstance(v, dict) else v for k, v in (data.get("fields") or {}).items()}
    return t(data["key"], lang, **fields)


def cause_text(cause, lang):
    """A likely cause (`stats.CauseStats`) worded in `lang`."""
    from autograder.text import one_line

    if cause.key and cause.key.startswith("cause_"):  # the suites' causes, not any catalog text
        seen = sorted(cause.seen, key=lambda s: (s[0] != lang, s[1]))
        for source, _, record in seen:
            try:
                # a field that is a message is worded again in `lang` from its key; any other
                # (a name, a number) stays as it is
                fields = {**(record.get("fields") or {})}
                fields.update({k: _worded(v, lang) for k, v in (record.get("field_msgs") or {}).items()})
                return one_line(t(cause.key, lang, **fields), MAX_CAUSE)
            except (MessageError, KeyError, IndexError, ValueError, AttributeError, TypeError):
                continue  # a key this kit's catalog lacks, or fields that do not fit it: the text as read
    return one_line(cause.text, MAX_CAUSE)
