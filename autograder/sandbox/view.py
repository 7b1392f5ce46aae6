"""What a worker may reach, computed in the judge as plain data.

The rule is one of reachability, not a list of what to hide. A worker (judge
as root, with a mount namespace) gets a new root file system holding only:

- the system's own folders (`SYSTEM`: programs, shared libraries, /etc) and
  the kernel's (`KERNEL`: /dev, /proc, /sys);
- the interpreter and its libraries: the prefixes of the Python running the
  judge (base and virtual environment), its site-packages folders, and the
  folders holding torch, numpy and matplotlib;
- the worker side of this copy of the kit (`layout.WORKER_SIDE`: the protocol
  and the worker), and nothing else of it;
- fresh private tmpfs folders for /tmp, /var/tmp, /dev/shm and /run/lock,
  and its own working directory.

So a checkout, a course folder, an autograder zip's `kit/`, a build folder or
anyone's home is simply not there. Where such a place sits inside one of the
folders above (the kit pip-installed into site-packages, an older copy
installed beside it, a checkout under /usr), every copy of the kit found there
is replaced by an empty folder (`masks`) before the worker side of the running
copy is put back.

Where no mount namespace can be made (a container without CAP_SYS_ADMIN),
`fallback_hide` lists what is made root-only (mode 0700) instead: see
`confine.restrict_by_mode` and docs/pages/architecture/index.md.
"""

import os
import site
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from autograder import layout

SYSTEM = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc")
KERNEL = ("/dev", "/proc", "/sys")
# Directories any user may write to: each worker gets private empty ones, so a
# submission can neither leave files for another nor read what one left.
PRIVATE_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
LIBRARIES = ("torch", "numpy", "matplotlib")
KIT_DISTRIBUTIONS = ("attention-autograder-kit", "attention-autograder-kit-public")


def interpreter() -> str:
    """This Python as a path a worker can reach: absolute, `..` folded away but
    links kept (a venv's bin/python must stay the venv's), so that starting
    the interpreter as `../venv/bin/python` from a folder outside the view works."""
    return os.path.normpath(os.path.abspath(sys.executable))


@dataclass
class View:
    binds: list[str] = field(default_factory=list)  # read-only, at the same path inside
    masks: list[str] = field(default_factory=list)  # copies of the kit inside `binds`: emptied
    worker_side: list[str] = field(default_factory=list)  # bound back after the masks
    fallback_hide: list[str] = field(default_factory=list)  # made 0700 where no mount namespace
    reach: list[str] = field(default_factory=list)  # must stay traversable in that fallback

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "View":
        return cls(**data)


def _under(path: str | Path, parent: str | Path) -> bool:
    path, parent = Path(path), Path(parent)
    return path == parent or parent in path.parents


def _library_dirs() -> set[str]:
    dirs = {sys.base_prefix, sys.prefix, sys.exec_prefix, sys.base_exec_prefix}
    try:
        dirs.update(site.getsitepackages())
    except AttributeError:  # some virtualenv versions
        pass
    user = site.getusersitepackages() if hasattr(site, "getusersitepackages") else None
    if user and os.path.isdir(user):
        dirs.add(user)
    for name in LIBRARIES:
        module = sys.modules.get(name)
        origin = getattr(module, "__file__", None) if module is not None else _origin(name)
        if origin:
            dirs.add(str(Path(origin).resolve().parent.parent))
    for d in os.environ.get("LD_LIBRARY_PATH", "").split(":"):
        if d and os.path.isabs(d):
            dirs.add(d)
    return {str(Path(d).resolve()) for d in dirs if d and os.path.isdir(d)}


def _origin(name: str) -> str | None:
    """Where a top-level package would be imported from, without importing it (matplotlib's
    import alone costs 0.7 s of CPU, and the worker never loads the real one), or None."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None and spec.has_location else None


def _is_kit_package(path: str | Path) -> bool:
    """A folder that is a copy of the kit's package (this layout or an older one)."""
    path = Path(path)
    return path.name == "autograder" and any(
        (path / marker).exists() for marker in ("private", "suites", "judge", "judge.py", "layout.py")
    )


def _kit_copies(search: set[str]) -> set[Path]:
    """Every copy of the kit's files found in the folders the interpreter
    searches: kit packages, a `solutions` package beside one (older layouts),
    and whatever the kit's installed distributions list."""
    found: set[Path] = set()
    for d in search:
        for name in ("autograder", "solutions"):
            p = Path(d) / name
            if name == "autograder" and _is_kit_package(p):
                found.add(p)
            if name == "solutions" and p.is_dir() and _is_kit_package(Path(d) / "autograder"):
                found.add(p)
    try:
        from importlib import metadata

        # by name: read from the folders' names, not by parsing every distribution's metadata (0.3 s)
        for dist in (d for name in KIT_DISTRIBUTIONS for d in metadata.distributions(name=name)):
            site_dir = Path(dist.locate_file("")).resolve()  # type: ignore[arg-type]  # a Path here
            for f in dist.files or ():
                top = f.parts[0] if f.parts else ""
                # packages and modules it put in its site folder (not scripts in ../../bin)
                if (
                    not top
                    or top in (".", "..")
                    or top.endswith((".dist-info", ".pth"))
                    or top.startswith("__editable__")
                ):
                    continue
                located = (site_dir / top).resolve()
                if located.parent == site_dir and located.exists():
                    found.add(located)
    except Exception:  # noqa: BLE001 - metadata of other packages is not ours to trust
        pass
    return found


_CACHE: dict[str, View] = {}


def compute() -> View:
    """The `View` of this judge process (cached: paths do not move while it runs)."""
    if "view" in _CACHE:
        return _CACHE["view"]
    libraries = sorted(_library_dirs())
    binds = [p for p in SYSTEM + KERNEL if os.path.lexists(p)] + libraries
    search = set(libraries) | {str(Path(p).resolve()) for p in sys.path if p and os.path.isdir(p)}
    search = {d for d in search if any(_under(d, b) for b in binds)}
    copies = _kit_copies(search) | {layout.PACKAGE}
    if layout.COURSE is not None:
        copies.add(layout.COURSE)
    copies.add(layout.SOLUTIONS.resolve())
    masks = sorted(str(p) for p in copies if any(_under(p, b) for b in binds))
    worker_side = [str(layout.PACKAGE / name) for name in layout.WORKER_SIDE]
    hide = {layout.PRIVATE, layout.SOLUTIONS.resolve()}
    if layout.COURSE is not None:
        hide |= {layout.COURSE / d for d in ("assignments", "examples")}
    for copy in copies:
        if Path(copy).name == "autograder":
            hide |= {Path(copy) / "private", Path(copy) / "suites"}
        elif Path(copy).name == "solutions":
            hide.add(Path(copy))
    reach = sorted({str(Path(sys.executable).resolve().parent), *libraries, *worker_side})
    view = View(
        binds=binds,
        masks=masks,
        worker_side=worker_side,
        fallback_hide=sorted(str(p) for p in hide if Path(p).exists()),
        reach=reach,
    )
    _CACHE["view"] = view
    return view


def worker_env(scratch: str | Path) -> dict[str, str]:
    """The whole environment of a worker: nothing of the judge's; PATH holds
    only the interpreter's folder and the system's; PYTHONPATH only the
    folder that holds the worker side of this copy of the kit."""
    work = str(Path(scratch) / "work")
    env = {
        "PATH": f"{Path(interpreter()).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": work,
        "TMPDIR": work,
        "KIT_PROGRESS": str(Path(scratch) / "progress"),
        "LANG": "C.UTF-8",
        # The worker's uid has no passwd entry: getpass.getuser() (torch calls it
        # on some first uses, e.g. the meta device in torch 2.11) reads these first.
        "USER": "kit-worker",
        "LOGNAME": "kit-worker",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": work,
        "OMP_NUM_THREADS": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPATH": str(layout.KIT_ROOT),
    }
    if "CUDA_VISIBLE_DEVICES" in os.environ:
        env["CUDA_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]
    return env
