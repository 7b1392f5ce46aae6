"""Reading pt-BR text for English: the one detector the feedback test (test_ptbr_feedback)
and the sources' term test (test_terms) share."""

import re

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


def english_in(line):
    """English words in a line of pt-BR text, outside code and outside the text of an error
    the student's own code raised (torch's messages are English)."""
    line = re.sub(r"(lançou|raised) [\w.]+( \([^)]*\))?: .*?(?=(Causa provável|$))", " ", line.replace("\\", ""))
    return sorted(set(re.findall(r"\b[a-z]+\b", CODE.sub(" ", line).lower())) & ENGLISH)
