"""tcran: traffic control for the 5G RAN, from Python.

Built from the same Rust crates as the ``tcran`` command (docs/python.md):

- :func:`run` runs a scenario's variants and gives the summary and tidy
  polars DataFrames (``.flows``, ``.layers``, ``.series(name)``), and
  writes the command line's files (``.write(dir)``, report.html included);
- :func:`sweep` runs a grid of ``--set`` values x seeds on this machine's
  cores, a Dask or a Ray cluster, into a resumable Parquet store;
- :class:`Pipeline` drives one TC pipeline packet by packet or in batches
  from numpy arrays;
- :func:`stages` lists every stage kind (``tcran stages --json``);
- :mod:`tcran.xapp` writes traffic-control xApps: an E2 termination,
  typed indications, controls and their outcomes.

Errors are the command line's one-line messages: :class:`ConfigError` (a
``ValueError``) for a bad scenario, config, override or argument,
:class:`OutputError` (an ``OSError``) for files that cannot be written.
"""

from ._native import GIT_COMMIT, VERSION, ConfigError, OutputError
from ._pipeline import DROP_REASONS, OUTCOMES, Pipeline, Pulled, Pushed
from ._run import SERIES, Run, run, stages, validate
from .sweep import Store, sweep
from . import xapp

__version__ = VERSION

__all__ = [
    "ConfigError",
    "DROP_REASONS",
    "GIT_COMMIT",
    "OUTCOMES",
    "OutputError",
    "Pipeline",
    "Pulled",
    "Pushed",
    "Run",
    "SERIES",
    "Store",
    "VERSION",
    "run",
    "stages",
    "sweep",
    "validate",
    "xapp",
]
