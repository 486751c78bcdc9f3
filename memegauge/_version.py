"""The package version (one place; `memegauge.__version__` re-exports it)."""

__version__ = "0.1.0"
