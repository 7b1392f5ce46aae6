"""`grading.yml`: points, tolerances per dtype, devices, limits, CI settings.

The kit ships one grading.yml as package data (read with `importlib.resources`;
in a checkout it is the top-level `grading.yml`): it holds every default, and
nothing else in the kit restates them. A course's own file overrides it: the
path given to `load`, else `$KIT_GRADING_YML`, else `grading.yml` in the
current folder, else the packaged one. Its `assignments` replace the packaged
ones, but for an assignment's run in the grader (`assignments.<name>.run`) and the
settings of its cost checks (`assignments.<name>.costs`): each key it sets there replaces
the packaged one's, as in the other sections each key it sets replaces the default's.
An older file's top-level run section (`training_run`, `transformer_run`: the names the
assignments' declarations keep) still works, with a one-line deprecation note.
"""

import os
import sys
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import yaml

from autograder import declarations, schema

MERGED_SECTIONS = ("tolerances", "devices", "limits", "ci", "scoring", "feedback")
RUN_QUESTION = declarations.RUN_QUESTION


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

    def run(self, assignment):
        """`assignment`'s run in the grader (grading.yml `assignments.<name>.run`; {}: none)."""
        return dict(self.data["assignments"][assignment].get("run") or {})

    def costs(self, assignment):
        """The settings of `assignment`'s cost checks (grading.yml `assignments.<name>.costs`; {}: none)."""
        return dict(self.data["assignments"][assignment].get("costs") or {})

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
    except ValueError as exc:  # a number the interpreter refuses to read (an int of 4300 digits or more)
        raise ConfigError(f"{path}: {str(exc).splitlines()[0]}") from None
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
        merged["assignments"] = _with_packaged_settings(own["assignments"], data["assignments"])
    for section in MERGED_SECTIONS:
        if section in own:
            if not isinstance(own[section], dict):
                raise ConfigError(f"{path}: section '{section}' is not a mapping")
            merged[section] = {**(data.get(section) or {}), **own[section]}
    for key, value in own.items():  # top-level settings (language): the course's own replace the defaults
        if key != "assignments" and key not in MERGED_SECTIONS:
            merged[key] = value
    _move_legacy_runs(own, merged, data, path)
    _validate(merged, path)
    return Config(Path(path), merged)


def _merged_setting(default, own):
    """A course's run or cost settings over the packaged ones, key by key (settings that are not
    a mapping are left for the schema to name)."""
    if not isinstance(own, dict) or not isinstance(default, dict):
        return own
    return {**default, **own}


DECLARED_SETTINGS = ("run", "costs")  # an assignment's settings its own schemas check (`declarations`)


def _with_packaged_settings(own, packaged):
    """A course's assignments, each one's run and cost settings merged over the packaged
    ones of its name, key by key."""
    if not isinstance(own, dict):
        return own
    out = {}
    for name, entry in own.items():
        for key in DECLARED_SETTINGS:
            default = (packaged.get(name) or {}).get(key)
            if isinstance(entry, dict) and default is not None:
                entry = {**entry, key: _merged_setting(default, entry.get(key, {}))}
        out[name] = entry
    return out


def _move_legacy_runs(own, merged, defaults, path):
    """An older file's top-level run section (`training_run`...) becomes the run of the
    assignments whose declaration names it: over the packaged run, under the file's own
    `assignments.<name>.run`. One line on stderr says so."""
    if not isinstance(merged.get("assignments"), dict):
        return  # the schema names what is wrong with them
    assignments = merged["assignments"] = dict(merged["assignments"])
    own_assignments = own.get("assignments") if isinstance(own.get("assignments"), dict) else {}
    for key, names in declarations.legacy_runs().items():
        if key not in own:
            continue
        if not isinstance(own[key], dict):
            raise ConfigError(f"{path}: section '{key}' is not a mapping")
        merged.pop(key, None)
        where = ", ".join(f"assignments.{n}.run" for n in names)
        sys.stderr.write(f"{path}: '{key}' is deprecated: write its settings under {where}\n")
        for name in names:
            if not isinstance(assignments.get(name), dict):
                continue
            stated = own_assignments.get(name)
            stated = stated.get("run", {}) if isinstance(stated, dict) else {}
            packaged = (defaults["assignments"].get(name) or {}).get("run", {})
            assignments[name] = {
                **assignments[name],
                "run": _merged_setting(_merged_setting(packaged, own[key]), stated),
            }


def load(path=None):
    located = locate(path)
    return _load(str(located.resolve()) if located is not None else None)
