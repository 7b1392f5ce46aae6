"""`grading.yml`: points, tolerances per dtype, devices, limits, CI settings.

The kit ships one grading.yml as package data (read with `importlib.resources`;
in a checkout it is the top-level `grading.yml`): it holds every default, and
nothing else in the kit restates them. A course's own file overrides it: the
path given to `load`, else `$KIT_GRADING_YML`, else `grading.yml` in the
current folder, else the packaged one. Its `assignments` replace the packaged
ones; in the other sections each key it sets replaces the default's.
"""

import os
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import yaml

from autograder import schema

MERGED_SECTIONS = ("tolerances", "devices", "limits", "ci", "scoring", "training_run", "transformer_run", "feedback")
RUN_QUESTION = "training_run"  # the question an assignment's training run in the grader scores
# grading.yml's settings of each assignment's run (default: the training lab's section)
RUN_SECTIONS = {"transformer_block": "transformer_run"}


def run_section(assignment):
    """The grading.yml section that holds `assignment`'s training run."""
    return RUN_SECTIONS.get(assignment, "training_run")


class ConfigError(Exception):
    pass


@dataclass(frozen=True)
class Config:
    path: Path
    data: dict

    @property
    def assignments(self):
        return list(self.data["assignments"])

    def questions(self, assignment):
        """{question: points} in notebook order."""
        return dict(self.data["assignments"][assignment]["questions"])

    def title(self, assignment, lang=None):
        """The assignment's title in `lang` (else the language in force): grading.yml gives one
        text, or one per language."""
        title = self.data["assignments"][assignment].get("title", assignment)
        if not isinstance(title, dict):
            return title
        from autograder import messages

        edition = {messages.normalize(k): v for k, v in title.items()}
        return edition.get(messages.normalize(lang) if lang else messages.current(), assignment)

    def tolerance(self, dtype):
        """(atol, rtol) for a dtype name or torch dtype."""
        name = str(dtype).replace("torch.", "")
        tol = self.data["tolerances"].get(name)
        if tol is None:
            raise ConfigError(f"grading.yml has no tolerance for {name}")
        return float(tol["atol"]), float(tol["rtol"])

    @property
    def devices(self):
        return {k: list(v) for k, v in self.data["devices"].items()}

    @property
    def limits(self):
        return dict(self.data.get("limits") or {})

    @property
    def language(self):
        """The course's language for everything a student reads ("pt-BR" or "en")."""
        return str(self.data.get("language") or "pt-BR")

    @property
    def scoring(self):
        return dict(self.data.get("scoring") or {})

    def evidence_devices(self):
        return set(self.scoring.get("evidence_devices") or ())

    def weight(self, question, test):
        """The weight of one check (a test function) of a question; 1 unless grading.yml says
        otherwise (a number >= 0: `autograder.schema`)."""
        return float(((self.scoring.get("weights") or {}).get(question) or {}).get(test, 1))

    @property
    def training_run(self):
        """The training lab's run in the grader (grading.yml `training_run`)."""
        return dict(self.data.get("training_run") or {})

    @property
    def transformer_run(self):
        """The transformer lab's run in the grader (grading.yml `transformer_run`)."""
        return dict(self.data.get("transformer_run") or {})

    @property
    def ci(self):
        return dict(self.data.get("ci") or {})


def _validate(data, path):
    """The whole file against the kit's one schema (`autograder.schema`): one line naming
    the file and the key."""
    try:
        schema.GRADING.check(data, "")
    except schema.Invalid as exc:
        raise ConfigError(f"{path}: {exc.line()}") from None


def _read(path):
    try:
        data = yaml.safe_load(Path(path).read_text())
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {str(exc).splitlines()[0]}") from None
    if data is not None and not isinstance(data, dict):
        raise ConfigError(f"{path}: not a mapping of sections")
    return data or {}


def packaged_text():
    return resources.files("autograder").joinpath("grading.yml").read_text()


def _defaults():
    data = yaml.safe_load(packaged_text())
    _validate(data, "the kit's packaged grading.yml")
    return data


def locate(path=None):
    """The grading.yml in force (None: the packaged one)."""
    for candidate in (path, os.environ.get("KIT_GRADING_YML")):
        if candidate:
            return Path(candidate)
    here = Path.cwd() / "grading.yml"
    return here if here.is_file() else None


@lru_cache(maxsize=8)
def _load(path):
    data = _defaults()
    if path is None:
        return Config(Path(str(resources.files("autograder").joinpath("grading.yml"))), data)
    own = _read(path)
    merged = dict(data)
    if "assignments" in own:
        merged["assignments"] = own["assignments"]
    for section in MERGED_SECTIONS:
        if section in own:
            if not isinstance(own[section], dict):
                raise ConfigError(f"{path}: section '{section}' is not a mapping")
            merged[section] = {**(data.get(section) or {}), **own[section]}
    for key, value in own.items():  # top-level settings (language): the course's own replace the defaults
        if key != "assignments" and key not in MERGED_SECTIONS:
            merged[key] = value
    _validate(merged, path)
    return Config(Path(path), merged)


def load(path=None):
    located = locate(path)
    return _load(str(located.resolve()) if located is not None else None)
