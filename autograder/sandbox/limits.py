"""The worker's limits. Their values live in grading.yml only (the kit's
packaged one gives the defaults; a course's own overrides them)."""

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any


@dataclass
class Limits:
    cpu_seconds_per_call: float
    load_seconds: float
    memory_mb: int
    output_bytes: int
    processes: int
    submission_cpu_seconds: float
    disk_mb: int
    reply_bytes: int
    submission_seconds: float

    @classmethod
    def from_config(cls, values: Mapping[str, Any] | None) -> "Limits":
        """From grading.yml's `limits` mapping (every field present: `config`
        fills what a course's file leaves out from the kit's defaults)."""
        values = dict(values or {})
        missing = [f.name for f in fields(cls) if f.name not in values]
        if missing:
            raise ValueError(f"grading.yml limits lack {', '.join(missing)}")
        return cls(**{f.name: values[f.name] for f in fields(cls)})
