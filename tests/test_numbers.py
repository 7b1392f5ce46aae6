"""Numbers written at runtime read as the language writes them: a decimal comma in pt-BR
prose ("0,25"), a point inside code spans (`atol = 0.25`) and in English; in one place
(`messages.t` and `messages.decimal`), for every message of the catalog."""

import ast
import re

from autograder import messages
from autograder.messages import t
from conftest import ROOT

CODE_SPAN = re.compile(r"`[^`]*`")


def fields_of(template):
    import string

    return {f.split(".")[0].split("[")[0] for _, f, _, _ in string.Formatter().parse(template) if f}


def rendered_with(key, lang, value):
    """`key` in `lang` with every field `value`; None where a field's format cannot take it."""
    entry = messages.catalog()[key]
    try:
        return t(key, lang, **dict.fromkeys(fields_of(entry[lang]), value))
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None


def test_every_message_writes_a_float_field_as_its_language_does_outside_code_and_as_code_inside():
    checked = 0
    for key in messages.catalog():
        pt, en = rendered_with(key, "pt-BR", 0.25), rendered_with(key, "en", 0.25)
        if pt is None or "{" not in messages.catalog()[key]["pt-BR"]:
            continue
        checked += 1
        assert "0.25" not in CODE_SPAN.sub(" ", pt), (key, pt)  # prose: the comma
        assert all("0,25" not in span for span in CODE_SPAN.findall(pt)), (key, pt)  # code: the point
        assert en is None or "0,25" not in en, (key, en)
    assert checked >= 100


def test_a_real_sentence_and_its_code_span():
    assert "0,8" in t("ci_passes", "pt-BR", threshold=0.8) and "0.8" in t("ci_passes", "en", threshold=0.8)
    # formatted as the template asks, then the language's comma; an int and a text stay as they are
    assert t("check_total", "pt-BR", passed=3, total=4).startswith("3 de 4")
    assert messages.decimal("1e-05", "pt-BR") == "1e-05" and messages.decimal("2.5", "pt-BR") == "2,5"
    assert messages.decimal("2.5", "en") == "2.5"


def test_one_field_in_prose_and_in_code_reads_both_ways():
    """by_hand_word_name holds {name} inside a code span and outside it."""
    said = t("by_hand_word_name", "pt-BR", line=2, name=0.5)
    assert "`0.5`" in said and '"0,5"' in said, said


NUMBER_SPEC = re.compile(r"(\.\d+)?[fgeFGE%]")


def preformatted_numbers(tree):
    """[(line, field)] of `t(...)`/`Msg(...)` fields passed as a number already made text
    (`max=f"{x:.3g}"`): such a field can no longer read as the language writes it."""
    found = []
    for node in ast.walk(tree):
        name = getattr(getattr(node, "func", None), "id", None) or getattr(getattr(node, "func", None), "attr", None)
        if not (isinstance(node, ast.Call) and name in ("t", "Msg")):
            continue
        for kw in node.keywords:
            v = kw.value
            if (
                isinstance(v, ast.JoinedStr)
                and len(v.values) == 1
                and isinstance(v.values[0], ast.FormattedValue)
                and v.values[0].format_spec is not None
                and NUMBER_SPEC.fullmatch("".join(getattr(x, "value", "") for x in v.values[0].format_spec.values))
            ):
                found.append((v.lineno, kw.arg))
    return found


def test_no_message_gets_a_number_already_written_as_text():
    found = [
        f"{path.relative_to(ROOT)}:{line}: {field}= (pass messages.number(x, spec))"
        for path in sorted((ROOT / "autograder").rglob("*.py"))
        for line, field in preformatted_numbers(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert not found, "\n".join(found)
    said = 't("values_differ", err=f"{e:.3g}", n=3)\nMsg("cause_x", own=f"{own:.2f}", name=f"{n}")'
    assert preformatted_numbers(ast.parse(said)) == [(1, "err"), (2, "own")]


def test_a_number_field_keeps_its_format_and_reads_as_the_language():
    x = messages.number(0.123456, ".3g")
    assert str(x) == "0.123" and t("ci_passes", "pt-BR", threshold=x).count("0,123") == 1
    assert "0.123" in t("ci_passes", "en", threshold=x)
