"""Names and student text on their way into the batch's files: one printable line, valid UTF-8.

File names come from students (undecodable bytes, control characters) and so do
Gradescope's submitter names; both reach results.json, grades.csv and the
terminal. Kept apart from the batch itself so the batch's own modules (the CSV,
the feedback files, the export reader) share it without importing each other.
"""

import os


def display(path, limit=1000):
    """A path as one printable line: undecodable bytes as U+FFFD, control characters as spaces."""
    text = os.fsencode(path).decode("utf-8", "replace")
    if text.isprintable() and len(text) <= limit:
        return text  # nothing to clean (and no import of the judge, which imports torch)
    from autograder.text import one_line

    return one_line(text, limit)


def clean(obj):
    """A results dict with no lone surrogates (undecodable file names): they become U+FFFD."""
    if isinstance(obj, str):
        try:
            obj.encode("utf-8")
            return obj
        except UnicodeEncodeError:
            try:
                return obj.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            except UnicodeEncodeError:
                return obj.encode("utf-8", "replace").decode("utf-8")
    if isinstance(obj, dict):
        return {clean(k): clean(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [clean(v) for v in obj]
    return obj
