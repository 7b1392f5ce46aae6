"""`grading.yml`: points, tolerances per dtype, devices and limits."""
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

KIT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PATH = KIT_ROOT / "grading.yml"


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


def _validate(data, path):
    for key in ("assignments", "tolerances", "devices"):
        if key not in (data or {}):
            raise ConfigError(f"{path}: missing section '{key}'")
    for name, spec in data["assignments"].items():
        qs = (spec or {}).get("questions")
        if not qs or not all(isinstance(p, (int, float)) and p > 0 for p in qs.values()):
            raise ConfigError(f"{path}: assignment {name} needs questions with positive points")


@lru_cache(maxsize=8)
def load(path=None):
    path = Path(path or os.environ.get("KIT_GRADING_YML") or DEFAULT_PATH)
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    _validate(data, path)
    return Config(path, data)
