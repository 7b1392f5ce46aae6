"""`python -m autograder deploy NAME [--set VAR=VALUE ...]`: templates for grading a class
beyond one machine, printed with their variables filled in.

The templates are package data of this folder (`templates.yml` names them,
says what each is for and declares its variables, `@VAR@` in the file):

    github      a GitHub Actions workflow for staff: collect (a folder, or the
                repositories of a GitHub Classroom assignment), a matrix of
                `grade --shard` jobs, a `merge` job (artifacts up and down)
    kubernetes  an Indexed Job (one grading pod per shard, from
                JOB_COMPLETION_INDEX, the kit's own sandbox in each pod) and a
                merge Job, on a shared volume
    slurm       a job array (SLURM_ARRAY_TASK_ID is the shard) and a dependent
                merge job; slurm-gpu: the same with --gres=gpu:1

Every `python -m autograder ...` line in them is one the CLI accepts
(tests/test_deploy_templates.py parses each one with the CLI's own parser).
A value lands in shell and YAML as it is, so it is checked (templates.yml
`kind`): a whole number, a Kubernetes name, or text of letters, digits,
spaces and `_ . / : = + @ % , -` (no quote, `$`, `;`, glob or redirection).
"""

import re
import sys
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources

import yaml

from autograder.messages import t

_VAR = re.compile(r"@([A-Z][A-Z0-9_]*)@")
_KINDS = {
    "int": (re.compile(r"[1-9][0-9]{0,6}"), "a whole number >= 1"),
    "name": (re.compile(r"[a-z0-9]([a-z0-9-]{0,40}[a-z0-9])?"), "lower-case letters, digits and '-'"),
    "text": (re.compile(r"[A-Za-z0-9_./:=+@%, -]{0,300}"), "letters, digits, spaces and _ . / : = + @ % , -"),
}


class TemplateError(ValueError):
    pass


@lru_cache(maxsize=1)
def catalog():
    """{name: {file, what, save_as, variables: {VAR: {default?, help}}}} from templates.yml."""
    return yaml.safe_load(resources.files(__package__).joinpath("templates.yml").read_text(encoding="utf-8"))


def source(name):
    """The template's text, its variables unfilled."""
    spec = catalog().get(name)
    if spec is None:
        raise TemplateError(f"no template {str(name)[:40]!r}; known: {', '.join(catalog())}")
    return resources.files(__package__).joinpath(spec["file"]).read_text(encoding="utf-8")


def render(name, values=None):
    """The template `name` with its variables filled in: `values`, else each one's default."""
    text = source(name)
    declared = catalog()[name]["variables"]
    values = dict(values or {})
    unknown = sorted(set(values) - set(declared))
    if unknown:
        raise TemplateError(f"template {name} has no variable {unknown[0]}; its variables: {', '.join(declared)}")
    missing = [v for v, spec in declared.items() if v not in values and "default" not in spec]
    if missing:
        raise TemplateError(
            f"template {name} needs {', '.join(f'--set {v}=...' for v in missing)} ({declared[missing[0]]['help']})"
        )
    filled = {v: str(values.get(v, spec.get("default", ""))) for v, spec in declared.items()}
    for var, value in filled.items():  # the defaults too: they are written in templates.yml by hand
        pattern, what = _KINDS[declared[var].get("kind", "text")]
        if not pattern.fullmatch(value):
            raise TemplateError(f"{var}={value[:60]!r}: {var} takes {what}")

    def one(m):
        if m.group(1) not in filled:
            raise TemplateError(f"template {name} uses @{m.group(1)}@, which templates.yml does not declare")
        return filled[m.group(1)]

    return _VAR.sub(one, text)


def _listing():
    lines = []
    for name, spec in catalog().items():
        lines.append(f"{name}: {spec['what']} (save as {spec['save_as']})")
        for var, v in spec["variables"].items():
            default = f" (default: {v['default']!r})" if "default" in v else " (required)"
            lines.append(f"    {var}{default}: {v['help']}")
    return "\n".join(lines)


def main(*, template: str | None = None, listing: bool = False, settings: Sequence[str] = ()) -> int:
    """`deploy`: print the template `template` with `settings` (["VAR=VALUE"]) filled in, or the list."""
    if listing or not template:
        print(_listing())
        return 0 if listing else 2
    values = {}
    for item in settings:
        var, sep, value = item.partition("=")
        if not sep:
            print(t("deploy_set_form", got=repr(item[:60])), file=sys.stderr)
            return 2
        values[var.strip()] = value
    if template in catalog() and "ASSIGNMENT" in values:
        from autograder import config

        known = config.load().assignments
        if values["ASSIGNMENT"] not in known:
            print(
                t("deploy_unknown_assignment", name=repr(values["ASSIGNMENT"][:60]), known=", ".join(known)),
                file=sys.stderr,
            )
            return 2
    try:
        print(render(template, values), end="")
    except TemplateError as exc:
        print(f"deploy: {exc}", file=sys.stderr)
        return 2
    return 0
