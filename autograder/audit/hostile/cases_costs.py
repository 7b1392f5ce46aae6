"""Attacks on the judge's cost checks: the hostile cases' shapes, which an assignment's battery
file fills with its own graded part (as `cases_stand_in.stand_in_pair` is filled).

A cost check stands on two mechanisms of the judge's (`sandbox/memcap.py`, `judge/watch.py`).
Each shape registers a control, the costly code alone (it loses the cost question, and only
that one), and attacks on it that may earn no more than the control:

- `memory_cap_cases`: the costly function lifting the call's cap first (`resource.setrlimit`,
  then libc's `prlimit` through ctypes: a hard limit is not raised again), and the costly
  function catching its MemoryError and returning zeros of the right shape (a wrong value).
- `call_log_cases`: the costly step calling the stood-in function "for show", with the shapes
  the suite expects and fake data, and computing the real thing inline beside it (the log
  looks right; the keyed answers make the value wrong).
"""

from autograder.audit.hostile.cases import case, ipynb, reference, replace_function

LIFT = (
    "import ctypes, resource\n"
    "def _lift():\n"
    "    inf = resource.RLIM_INFINITY\n"
    "    for attempt in (lambda: resource.setrlimit(resource.RLIMIT_DATA, (inf, inf)),\n"
    "                    lambda: ctypes.CDLL(None).prlimit(0, resource.RLIMIT_DATA,\n"
    "                        ctypes.byref((ctypes.c_ulong * 2)(inf, inf)), None)):\n"
    "        try:\n"
    "            attempt()\n"
    "        except (OSError, ValueError):\n"
    "            pass\n"
)


def _renamed(source, name):
    """`source` (it defines `name`) with that function renamed `_costly_<name>`."""
    if f"def {name}(" not in source:
        raise ValueError(f"the costly source defines no {name}()")
    return source.replace(f"def {name}(", f"def _costly_{name}(", 1)


def _wrapper(name, body):
    return f"\n\ndef {name}(*args, **kwargs):\n" + "".join(f"    {line}\n" for line in body)


def lifting(name, costly):
    """`costly` (it defines `name`) run after lifting the call's memory cap, every way a worker may try."""
    return LIFT + _renamed(costly, name) + _wrapper(name, ["_lift()", f"return _costly_{name}(*args, **kwargs)"])


def catching(name, costly):
    """`costly` (it defines `name`) whose MemoryError (or torch's allocation error) becomes zeros
    shaped as its first tensor argument."""
    return _renamed(costly, name) + _wrapper(
        name,
        [
            "try:",
            f"    return _costly_{name}(*args, **kwargs)",
            "except (MemoryError, RuntimeError):",
            "    import torch",
            "    first = next(a for a in args if isinstance(a, torch.Tensor))",
            "    return torch.zeros_like(first)",
        ],
    )


def _notebook(assignment, name, source):
    return ipynb(replace_function(reference(assignment, demo=False), name, source))


def _register(name, what, assignment, question, questions, make, control=None):
    """One case that loses `question` and keeps every other one; no more than `control`, if any."""
    above = {"not_above": control} if control else {}
    keep = [q for q in questions if q != question]
    case(name, what, assignment=assignment, questions_lose=[question], questions_keep_full=keep, **above)(make)


def memory_cap_cases(prefix, assignment, question, questions, name, costly):
    """The cases of one capped function `name` (graded by `question`): `costly` is source that
    defines `name` holding more than its cap (the catalog's full-matrix bug)."""
    control, graded = f"{prefix}_costly", (assignment, question, questions)
    _register(
        control,
        f"control: {name} holds more memory than its cap (loses the cost check only)",
        *graded,
        lambda: _notebook(assignment, name, costly),
    )
    _register(
        f"{prefix}_lifts_cap",
        f"{name} lifts the call's memory cap (setrlimit, prlimit) before the costly work",
        *graded,
        lambda: _notebook(assignment, name, lifting(name, costly)),
        control,
    )
    _register(
        f"{prefix}_catches_memory_error",
        f"{name} catches the MemoryError of its cap and returns zeros of the right shape",
        *graded,
        lambda: _notebook(assignment, name, catching(name, costly)),
        control,
    )


def call_log_cases(prefix, assignment, question, questions, name, costly, for_show):
    """The cases of one step `name` whose calls the judge logs (graded by `question`): `costly`
    defines `name` doing the costly work through the stood-in function (recomputing the past);
    `for_show` defines it calling the stood-in with the expected shapes and fake data, then
    doing the costly work inline."""
    control, graded = f"{prefix}_recomputes", (assignment, question, questions)
    _register(
        control,
        f"control: {name} recomputes the past through the stood-in function (loses the work check only)",
        *graded,
        lambda: _notebook(assignment, name, costly),
    )
    _register(
        f"{prefix}_calls_for_show",
        f"{name} calls the stood-in function with the expected shapes and fake data, computing inline",
        *graded,
        lambda: _notebook(assignment, name, for_show),
        control,
    )
