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
in both languages. The catalog is checked when it loads: every key has every
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
    """The message `key` in `lang` (default: the language in force), its fields filled in."""
    entry = catalog().get(key)
    if entry is None:
        raise MessageError(f"no message {key!r} in the catalog")
    return entry[normalize(lang) if lang else current()].format(**fields)


def check_label(test):
    """`test_fully_masked_rows` -> `fully masked rows` ("linhas totalmente mascaradas"):
    the catalog's `check_fully_masked_rows` in the language in force, else the name.
    (Here, not in the judge, so a class report needs no judge and no torch.)"""
    name = test.removeprefix("test_")
    if f"check_{name}" in catalog():
        return t(f"check_{name}")
    return name.replace("_", " ")
