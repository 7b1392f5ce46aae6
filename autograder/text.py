"""Student text on its way into the grader's outputs: bounded and inert.

Exception messages, type names, file names and cell text come from the
student. Wherever they land (a terminal, a Markdown job summary, results.json)
they are cut to a fixed size, kept to one line, stripped of control
characters (ANSI escapes, carriage returns) and, for Markdown, escaped so
they cannot start a heading, a table row, an image, HTML or a workflow
command of their own.
"""

import re

MAX_LINE_CHARS = 700  # a feedback line's size (the judge's lines, a counterexample's)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
# What could make student text act as Markdown or HTML of its own: code spans,
# emphasis, links and images, HTML tags, headings, table cells, strikethrough.
_MD_SPECIAL = re.compile(r"([\\`*\[\]<>#!|~])")


def one_line(text: object, limit: int = 300) -> str:
    """`text` as one printable line of at most `limit` characters."""
    text = str(text)
    if len(text) > 4 * limit:
        text = text[: 4 * limit]
    text = text.encode("utf-8", "replace").decode("utf-8")  # lone surrogates become '?'
    text = _CONTROL.sub(" ", text.replace("\r\n", "\n").replace("\n", " ").replace("\r", " ").replace("\t", " "))
    text = re.sub(r" {2,}", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 4].rstrip() + " ..."


def markdown(text: object, limit: int = 300) -> str:
    """`text` as inert Markdown inside a table cell or a line: every character
    that Markdown or HTML would act on is backslash-escaped."""
    return _MD_SPECIAL.sub(r"\\\1", one_line(text, limit))


class Strong(str):
    """A feedback line shown in bold (a question's summary): its role travels with it, so no
    renderer has to tell it by its words (which differ by language)."""

    __slots__ = ()


class Code(str):
    """A feedback line shown in monospace (a counterexample's call and outputs), as written."""

    __slots__ = ()


def fenced(lines: list[str]) -> str:
    """Lines as one Markdown fenced code block, literal whatever they hold: the fence is
    longer than any run of backticks in them."""
    runs = [len(m) for line in lines for m in re.findall(r"`+", line)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return "\n".join([fence, *lines, fence])
