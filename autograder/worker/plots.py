"""Plots in the worker are not drawn: `matplotlib` and `seaborn` are stand-ins there.

A graded notebook draws heatmaps and curves for its student; the judge grades
tensors, never pictures, and loading matplotlib cost a one-submission grading
0.7 s of CPU (1.4 s on Gradescope's half CPU). So inside the worker,
`import matplotlib.pyplot as plt` (or any `matplotlib.*`, `seaborn`) gives a
stand-in where every name, call, attribute, item and operation is accepted and
does nothing, `plt.subplots(r, c)` returns a figure and a grid of r x c axes
(squeezed like matplotlib's), and iterating over anything else gives nothing.
A cell that plots therefore runs without error and without drawing; what a
student's graded functions compute never depends on it.

`install()` puts a finder first on `sys.meta_path`; the real packages are
never imported in the worker.
"""

import importlib.abc
import importlib.machinery
import sys
import types

STUBBED = ("matplotlib", "seaborn", "mpl_toolkits")
SUBMODULES = {  # attributes of a top-level package that are modules (the rest are Anything)
    "matplotlib": {
        "pyplot",
        "colors",
        "cm",
        "ticker",
        "patches",
        "gridspec",
        "animation",
        "axes",
        "figure",
        "lines",
        "collections",
        "image",
        "transforms",
        "font_manager",
        "style",
        "colorbar",
        "widgets",
        "backends",
        "text",
        "dates",
        "markers",
        "path",
        "patheffects",
        "scale",
        "legend",
    },
    "mpl_toolkits": {"axes_grid1", "mplot3d"},
}


class Anything:
    """Stands for any plotting object: every use of it is accepted and gives another."""

    def __init__(self, name="plot"):
        object.__setattr__(self, "_name", name)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Anything(f"{self._name}.{name}")

    def __setattr__(self, name, value):
        pass

    def __call__(self, *args, **kwargs):
        return Anything(f"{self._name}()")

    def __getitem__(self, key):
        return Anything(f"{self._name}[]")

    def __setitem__(self, key, value):
        pass

    def __delitem__(self, key):
        pass

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __bool__(self):
        return True

    def __contains__(self, item):
        return False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __repr__(self):
        return f"<{self._name} (not drawn in the grader)>"

    def __mro_entries__(self, bases):  # `class MyNorm(matplotlib.colors.Normalize)`
        return (object,)

    def _same(self, *args):
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _same
    __neg__ = __pos__ = __or__ = __ror__ = __and__ = __rand__ = _same


class Grid(list):
    """The axes of `subplots(r, c)`: a list (of lists when both are above 1), as
    matplotlib's numpy array is indexed, iterated and flattened."""

    def __getitem__(self, key):
        if isinstance(key, tuple):
            out = self
            for k in key:
                out = list.__getitem__(out, k)
            return out
        got = list.__getitem__(self, key)
        return Grid(got) if isinstance(key, slice) else got

    def _flat(self):
        for item in list.__iter__(self):
            yield from (item._flat() if isinstance(item, Grid) else (item,))

    @property
    def flat(self):
        return self._flat()

    def ravel(self):
        return Grid(self._flat())

    flatten = ravel

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Anything(f"axes.{name}")


def subplots(nrows=1, ncols=1, *args, squeeze=True, **kwargs):
    """(figure, axes) shaped as matplotlib's: one Axes for 1 x 1, a row for 1 x c or r x 1."""
    try:
        nrows, ncols = max(1, int(nrows)), max(1, int(ncols))
    except (TypeError, ValueError):
        nrows = ncols = 1
    nrows, ncols = min(nrows, 64), min(ncols, 64)
    grid = Grid(Grid(Anything("axes") for _ in range(ncols)) for _ in range(nrows))
    if squeeze and nrows == 1 and ncols == 1:
        return Anything("figure"), grid[0][0]
    if squeeze and (nrows == 1 or ncols == 1):
        return Anything("figure"), Grid(grid._flat())
    return Anything("figure"), grid


class _Module(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if name in SUBMODULES.get(self.__name__, ()):  # `matplotlib.pyplot`, `from matplotlib import colors`
            import importlib

            return importlib.import_module(f"{self.__name__}.{name}")
        return Anything(f"{self.__name__}.{name}")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in STUBBED:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _Module(spec.name)
        module.__path__ = []
        module.__version__ = "0"
        if spec.name in ("matplotlib.pyplot", "seaborn"):
            module.subplots = subplots
        if spec.name == "matplotlib":
            module.use = lambda *a, **k: None
            module.rcParams = {}
        return module

    def exec_module(self, module):
        pass


def install():
    """Serve every later import of matplotlib and seaborn with the stand-ins (idempotent)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        for name in [m for m in sys.modules if m.split(".")[0] in STUBBED]:
            del sys.modules[name]
        sys.meta_path.insert(0, _Finder())
