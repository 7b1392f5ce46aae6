"""Reading pt-BR text for English: the one detector the feedback test (test_ptbr_feedback)
and the sources' term test (test_terms) share."""

import re
import string

from autograder import messages

# Common English words that no Portuguese sentence of the kit uses; the course's English
# terms (query, key, value(s), shape, batch, softmax, scores, padding, encoder, decoder,
# embedding, baseline, loss, token) are not here.
ENGLISH = set(
    """the expected differ should must likely cause returned instead is are was were of and or but this
that which because every each from than into over only its it does has have give gives returns got not with when
row rows been be an there their they what why how these those would could against accuracy length step""".split()
)
# code spans, dotted names, calls, attributes, subscripts
CODE = re.compile(r"`[^`]*`|\b\w+(?:\.\w+)+\(?|\.?\b\w+\(|\.\w+|\b\w+\[[^\]]*\]")


def _rendered(key, fields):
    """A pattern for what `messages.t(key)` renders in either language, each field by its
    pattern in `fields`: the catalog's own templates, never a copy of their words."""
    alternatives = []
    for template in messages.catalog()[key].values():
        parts = []
        for literal, field, _, _ in string.Formatter().parse(template):
            parts.append(re.escape(literal))
            if field is not None:
                parts.append(fields[field])
        alternatives.append("".join(parts))
    return "(?:" + "|".join(alternatives) + ")"


def _before_fields(key):
    """What `key` says before its first field, in either language (`Causa provável`)."""
    heads = [next(string.Formatter().parse(v))[0] for v in messages.catalog()[key].values()]
    return "(?:" + "|".join(map(re.escape, heads)) + ")"


# where an error was raised (`raised`'s {where}: " (in f, line 3 of the cell `[7]: def f(x):`)")
_CELL = "(?:{}|{})".format(_rendered("cell_shown", {"label": r"[^`]*"}), _rendered("cell_numbered", {"index": r"\d+"}))
_WHERE = "(?:{}|{})".format(
    _rendered("where_function", {"function": r"\w+", "line": r"\d+", "cell": _CELL}),
    _rendered("where_line", {"line": r"\d+", "cell": _CELL}),
)
# an error the student's code raised, its message up to a likely cause or the line's end
RAISED = re.compile(
    _rendered(
        "raised",
        {
            "type": r"[\w.]+",
            "where": rf"(?: \({_WHERE}\))?",
            "message": rf".*?(?={_before_fields('likely_cause_one')}|$)",
        },
    )
)


def english_in(line):
    """English words in a line of pt-BR text, outside code and outside the text of an error
    the student's own code raised (torch's messages are English)."""
    line = RAISED.sub(" ", line.replace("\\", ""))
    return sorted(set(re.findall(r"\b[a-z]+\b", CODE.sub(" ", line).lower())) & ENGLISH)
