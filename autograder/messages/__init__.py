"""Every text the kit writes for a student, in each language a course offers,
from one catalog (`autograder/messages/*.yml`, package data).

Each entry is a key with one template per language; templates take named
fields (`{what}`), the same ones in every language:

    values_differ:
      en: "{n} of {total} values differ from the reference"
      pt-BR: "{n} de {total} valores diferem da referência"

`t(key, **fields)` renders a key in the language in force: the one set with
`language(lang)` around a piece of work (the judge sets the submission's),
else $KIT_LANG, else grading.yml's `language`. Code identifiers and numbers stay as they are
in both languages, but for one thing: a float field outside a code span is written as the
language writes a number in prose (`decimal`: pt-BR's decimal comma, "0,25"), while one
inside backticks stays code (`atol = 0.25`). The catalog is checked when it loads: every key has every
language, the same fields in each, and no key is defined twice.
"""

import contextlib
import contextvars
import os
import string
from functools import lru_cache
from importlib import resources

import yaml

LANGUAGES = ("pt-BR", "en")
_ALIASES = {
    "pt": "pt-BR",
    "pt-br": "pt-BR",
    "pt_br": "pt-BR",
    "pt_BR": "pt-BR",
    "en": "en",
    "en-us": "en",
    "en_us": "en",
    "en-gb": "en",
    "english": "en",
    "portuguese": "pt-BR",
    "português": "pt-BR",
}
_current = contextvars.ContextVar("kit_language", default=None)


class MessageError(Exception):
    pass


def normalize(lang):
    """A language name as the kit writes it ("pt-BR", "en"), or MessageError."""
    if isinstance(lang, str):
        if lang in LANGUAGES:
            return lang
        found = _ALIASES.get(lang.strip().lower()) or _ALIASES.get(lang.strip())
        if found:
            return found
    raise MessageError(f"unknown language {str(lang)[:40]!r}: use one of {', '.join(LANGUAGES)}")


def _fields(template):
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


@lru_cache(maxsize=1)
def catalog():
    """{key: {language: template}} from every .yml of this package and each assignment's own
    messages file (`layout.assignment_messages`), checked: a key is defined once in all of them."""
    from autograder import layout

    out, where = {}, {}
    files = sorted((f for f in resources.files(__package__).iterdir() if f.name.endswith(".yml")), key=lambda f: f.name)
    named = [(f.name, f) for f in files] + [(f"{f.parent.name}/{f.name}", f) for f in layout.assignment_messages()]
    for name, f in named:
        # libyaml's safe loader where PyYAML has it: the catalog's ~1000 entries parse in
        # 0.05 s instead of 0.4 s (once per process; every judge and check reads it)
        try:
            data = yaml.load(f.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
        except yaml.YAMLError as exc:
            raise MessageError(f"{name} is not valid YAML: {' '.join(str(exc).split())}") from None
        if not isinstance(data, dict):
            raise MessageError(f"{name}: not a mapping of keys")
        for key, entry in data.items():
            if key in out:
                raise MessageError(f"message {key!r} is defined in {where[key]} and in {name}")
            if not isinstance(entry, dict) or set(entry) != set(LANGUAGES):
                raise MessageError(f"{name}: message {key!r} needs exactly {', '.join(LANGUAGES)}")
            if not all(isinstance(v, str) and v.strip() for v in entry.values()):
                raise MessageError(f"{name}: message {key!r} has an empty or non-text template")
            try:
                fields = {lang: _fields(v) for lang, v in entry.items()}
            except ValueError as exc:  # a brace left open: no template Python can format
                raise MessageError(f"{name}: message {key!r} is no template: {exc}") from None
            if len({frozenset(v) for v in fields.values()}) != 1:
                raise MessageError(f"{name}: message {key!r} takes different fields in different languages: {fields}")
            out[key], where[key] = entry, name
    return out


def default(cfg=None):
    """The language when nothing else chooses: $KIT_LANG, else grading.yml's `language`."""
    if os.environ.get("KIT_LANG"):
        return normalize(os.environ["KIT_LANG"])
    if cfg is None:
        from autograder import config

        cfg = config.load()
    return normalize(cfg.language)


def title(cfg, assignment, lang=None):
    """An assignment's title in `lang` (else the language in force): grading.yml gives one
    text, or one per language."""
    given = cfg.data["assignments"][assignment].get("title", assignment)
    if not isinstance(given, dict):
        return given
    edition = {normalize(k): v for k, v in given.items()}
    return edition.get(normalize(lang) if lang else current(), assignment)


def current():
    """The language in force (see `language`), else the default (`default`)."""
    lang = _current.get()
    return lang if lang is not None else default()


@contextlib.contextmanager
def language(lang):
    """Render messages in `lang` (None: grading.yml's) inside the block."""
    token = _current.set(normalize(lang) if lang is not None else None)
    try:
        yield
    finally:
        _current.reset(token)


def t(key, lang=None, **fields):
    """The message `key` in `lang` (default: the language in force), its fields filled in
    (a float outside a code span as `lang` writes numbers in prose: `decimal`)."""
    entry = catalog().get(key)
    if entry is None:
        raise MessageError(f"no message {key!r} in the catalog")
    lang = normalize(lang) if lang else current()
    if not any(isinstance(v, float) for v in fields.values()):
        return entry[lang].format(**fields)
    return _Sentence(lang).format(entry[lang], **fields)


def decimal(number_text, lang=None):
    """A number already written as code writes it ("0.25", "1e-05") as `lang` (default: the
    language in force) writes it in prose: a decimal comma in pt-BR ("0,25"). The one place
    the kit decides how a number reads in a sentence; code spans, CSV files and JSON keep
    the point."""
    lang = normalize(lang) if lang else current()
    return number_text.replace(".", ",") if lang == "pt-BR" else number_text


class Number(float):
    """A float with the format a sentence shows it in (`number(x, ".3g")`): `t` writes it
    as the language does in prose (`decimal`), `str` as code and data do."""

    def __new__(cls, value, spec=""):
        made = super().__new__(cls, value)
        made.spec = spec
        return made

    def __format__(self, spec):
        return format(float(self), spec or self.spec)

    def __str__(self):
        return format(self)

    def __repr__(self):
        return format(self)


def number(value, spec=""):
    """`value` as a message field shown with `spec` ("{:.3g}"'s ".3g"): the one way to pass a
    formatted number to `t` or `Msg`, so that pt-BR prose gets its decimal comma."""
    return Number(float(value), spec)


class _Sentence(string.Formatter):
    """str.format for one sentence in `lang`: a float field standing outside a `code span`
    (an even count of backticks before it) formatted as asked, then written with `decimal`."""

    def __init__(self, lang):
        self.lang, self.in_code = lang, False

    def parse(self, format_string):
        ticks = 0
        for literal, field, spec, conversion in super().parse(format_string):
            ticks += literal.count("`")
            self.in_code = ticks % 2 == 1
            yield literal, field, spec, conversion

    def format_field(self, value, format_spec):
        text = super().format_field(value, format_spec)
        return text if self.in_code or not isinstance(value, float) else decimal(text, self.lang)


def check_label(test):
    """`test_fully_masked_rows` -> `fully masked rows` ("linhas totalmente mascaradas"):
    the catalog's `check_fully_masked_rows` in the language in force, else the name.
    (Here, not in the judge, so a class report needs no judge and no torch.)"""
    name = test.removeprefix("test_")
    if f"check_{name}" in catalog():
        return t(f"check_{name}")
    return name.replace("_", " ")
