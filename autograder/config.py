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

MERGED_SECTIONS = ("tolerances", "devices", "limits", "ci", "scoring", "training_run", "transformer_run")


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

    def title(self, assignment):
        return self.data["assignments"][assignment].get("title", assignment)

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
        """The weight of one check (a test function) of a question; 1 unless grading.yml says otherwise."""
        w = ((self.scoring.get("weights") or {}).get(question) or {}).get(test, 1)
        if isinstance(w, bool) or not isinstance(w, (int, float)) or w < 0:
            raise ConfigError(f"grading.yml: scoring.weights.{question}.{test} must be a number >= 0")
        return float(w)

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
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: not a mapping of sections")
    for key in ("assignments", "tolerances", "devices", "limits"):
        if not isinstance(data.get(key), dict):
            raise ConfigError(f"{path}: missing section '{key}'")
    for name, spec in data["assignments"].items():
        qs = (spec or {}).get("questions")
        if (
            not isinstance(qs, dict)
            or not qs
            or not all(isinstance(p, (int, float)) and not isinstance(p, bool) and p > 0 for p in qs.values())
        ):
            raise ConfigError(f"{path}: assignment {name} needs questions with positive points")
    if "training_run" in data:
        _validate_training_run(data["training_run"], path)
    if "transformer_run" in data:
        _validate_transformer_run(data["transformer_run"], path)


TRAINING_RUN_KEYS = (
    "seed",
    "steps",
    "batch_size",
    "max_len",
    "n_symbols",
    "sizes",
    "lr",
    "eval_lengths",
    "eval_per_length",
    "cpu_seconds",
    "eval_cpu_seconds",
    "thresholds",
)


def _number(value, integer=True, least=0, strict=True):
    """Whether `value` is an int (or a float, with integer=False), never a bool, above `least`
    (at least `least` with strict=False)."""
    kinds = int if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kinds):
        return False
    return value > least if strict else value >= least


def _real(value):
    """Whether `value` is a number (an int or a float, never a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _run_section(run, keys, section, path):
    """A run section of grading.yml is a mapping with every key of `keys`."""
    if not isinstance(run, dict):
        raise ConfigError(f"{path}: {section} must be a mapping")
    missing = [k for k in keys if k not in run]
    if missing:
        raise ConfigError(f"{path}: {section} needs {', '.join(missing)}")


def _validate_training_run(run, path):
    """grading.yml `training_run` (the training lab's run in the grader): every key there,
    and thresholds only at lengths the judge evaluates."""
    _run_section(run, TRAINING_RUN_KEYS, "training_run", path)
    sizes = run["sizes"] if isinstance(run["sizes"], dict) else {}
    numbers = {k: run[k] for k in ("steps", "batch_size", "max_len", "eval_per_length")}
    numbers.update({f"sizes.{k}": sizes.get(k) for k in ("emb_dim", "hidden_dim", "attn_dim")})
    bad = [k for k, v in numbers.items() if not _number(v)]
    bad += [k for k in ("lr", "cpu_seconds", "eval_cpu_seconds") if not _number(run[k], integer=False)]
    if not _number(run["n_symbols"], least=2, strict=False):
        bad.append("n_symbols (at least 2)")
    if not _number(run["seed"], least=0, strict=False):
        bad.append("seed (an integer >= 0)")
    lengths = run["eval_lengths"]
    if not (isinstance(lengths, list) and lengths and all(_number(n) for n in lengths)):
        bad.append("eval_lengths (a list of positive integers)")
    if bad:
        raise ConfigError(f"{path}: training_run needs positive numbers: {', '.join(bad)}")
    th = run["thresholds"] if isinstance(run["thresholds"], dict) else {}
    lengths = set(run["eval_lengths"] or ()) if isinstance(run["eval_lengths"], list) else set()
    for key in ("accuracy", "gap_over_baseline"):
        at = th.get(key)
        if not isinstance(at, dict) or not at or not set(at) <= lengths:
            raise ConfigError(
                f"{path}: training_run.thresholds.{key} must map lengths of eval_lengths {sorted(lengths)} to numbers"
            )
    for key in ("zeroed_context_at_most", "loss_ratio_at_most"):
        if not _real(th.get(key)):
            raise ConfigError(f"{path}: training_run.thresholds.{key} must be a number")


TRANSFORMER_RUN_KEYS = (
    "seed",
    "steps",
    "batch_size",
    "length",
    "n_symbols",
    "sizes",
    "lr",
    "eval_sequences",
    "cpu_seconds",
    "eval_cpu_seconds",
    "thresholds",
)
TRANSFORMER_RUN_SIZES = ("d_model", "n_heads", "d_ff", "n_layers")
TRANSFORMER_RUN_THRESHOLDS = ("accuracy", "positions_drop", "reads_future_at_most", "loss_ratio_at_most")


def _validate_transformer_run(run, path):
    """grading.yml `transformer_run` (the transformer lab's run in the grader): every key
    there, positive sizes (n_heads dividing d_model, an even d_model for the sinusoidal
    positions), a length of at least 2 (the reads-ahead check needs two prompt symbols)
    and four numeric thresholds."""
    _run_section(run, TRANSFORMER_RUN_KEYS, "transformer_run", path)
    sizes = run["sizes"] if isinstance(run["sizes"], dict) else {}
    checks = {k: _number(run[k]) for k in ("steps", "batch_size", "eval_sequences")}
    checks.update({f"sizes.{k}": _number(sizes.get(k)) for k in TRANSFORMER_RUN_SIZES})
    checks.update({k: _number(run[k], integer=False) for k in ("lr", "cpu_seconds", "eval_cpu_seconds")})
    checks["length (at least 2)"] = _number(run["length"], least=2, strict=False)
    checks["n_symbols (at least 2)"] = _number(run["n_symbols"], least=2, strict=False)
    checks["seed (an integer >= 0)"] = _number(run["seed"], least=0, strict=False)
    bad = [k for k, ok in checks.items() if not ok]
    if bad:
        raise ConfigError(f"{path}: transformer_run needs positive numbers: {', '.join(bad)}")
    if sizes["d_model"] % 2 or sizes["d_model"] % sizes["n_heads"]:
        raise ConfigError(f"{path}: transformer_run.sizes.d_model must be even and a multiple of n_heads")
    th = run["thresholds"] if isinstance(run["thresholds"], dict) else {}
    for key in TRANSFORMER_RUN_THRESHOLDS:
        if not _real(th.get(key)):
            raise ConfigError(f"{path}: transformer_run.thresholds.{key} must be a number")


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
