"""The attention autograder kit (docs/pages/layout.md: the layout by side of the trust boundary)."""

__version__ = "0.2.0"  # the one place the version is written (pyproject.toml reads it)
