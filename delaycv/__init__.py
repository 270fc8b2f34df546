"""delaycv: delayed-label prequential k-fold evaluation of online binary classifiers.

``delaycv.evaluate(stream, model, policy=..., validation=...)`` is the Python API
(:func:`delaycv.api.evaluate`); it is imported on first use, so that ``import delaycv`` (and the
command line) stays light.
"""

import importlib

__version__ = "0.1.0"  # the one copy: pyproject.toml reads it (setuptools' dynamic version)
__all__ = ["__version__", "evaluate"]


def __getattr__(name: str):
    if name == "evaluate":
        # importlib, not an import statement: the workflow's code digests (delaycv.study.digests) follow
        # import statements, and no workflow stage runs the API
        return importlib.import_module("delaycv.api").evaluate
    raise AttributeError(f"module 'delaycv' has no attribute {name!r}")
