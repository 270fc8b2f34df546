"""The compiled fold loop (``_loop.pyx``), when it was built from the source beside it.

The fold loop exists twice: in Python (:meth:`delaycv.engine.fold.FoldLoop._python_chunk`, the one
the compiled loop must match, which also serves observers) and compiled
(:func:`delaycv.engine._loop.run_rows`: the same steps with C integers, about 0.8 us less per fold
and instance in the overhead benchmark's setting). Both give the same outputs, bit for bit
(``tests/engine/test_compiled_loop.py``). The compiled one is built by the package's install
(``pip install -e .``, ``make venv``: Cython and a C compiler); where it was not built, or cannot be
loaded (another platform), the Python loop runs.

:data:`LOOP` is the compiled module, or None. It is None as well when:

* the module was built from another ``_loop.pyx`` than the one beside it (an edited or checked-out
  source: the compiled module would run old code): a ``RuntimeWarning`` says how to rebuild;
* the environment variable ``DELAYCV_PURE_PYTHON`` is ``1`` (to run or measure the Python loop;
  ``0`` or unset: the compiled loop; any other value is refused with a ``ConfigError``).

The rules are :mod:`delaycv.common.native`'s, shared with the effort-aware measures' compiled loop.

:func:`status` says which loop runs and why (``make venv`` prints it).
"""

from __future__ import annotations

from pathlib import Path

from delaycv.common import native
from delaycv.common.native import PURE_PYTHON

#: The source of the compiled loop.
SOURCE = Path(__file__).with_name("_loop.pyx")

__all__ = ["LOOP", "PURE_PYTHON", "SOURCE", "source_digest", "status"]


def source_digest(path: Path = SOURCE) -> str:
    """SHA-256 (hex) of the loop's source, as the build records it in the compiled module."""
    return native.source_digest(path)


def _load():
    return native.load_compiled(
        "delaycv.engine._loop", SOURCE, "the compiled loop", lambda: source_digest()
    )


LOOP, _STATUS = _load()


def status() -> str:
    """Which fold loop runs, and why."""
    return _STATUS
