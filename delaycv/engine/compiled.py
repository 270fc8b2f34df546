"""The compiled fold loop (``_loop.pyx``), when it was built from the source beside it.

The fold loop exists twice: in Python (:meth:`delaycv.engine.fold.FoldLoop.run_chunk`, the
reference, which also serves observers) and compiled (:func:`delaycv.engine._loop.run_rows`: the
same steps with C integers, about 0.8 us less per fold and instance in the overhead benchmark's
setting). Both give the same outputs, bit for bit (``tests/test_compiled_loop.py``). The compiled one
is built by the package's install (``pip install -e .``, ``make venv``: Cython and a C compiler);
where it was not built, or cannot be loaded (another platform), the Python loop runs.

:data:`LOOP` is the compiled module, or None. It is None as well when:

* the module was built from another ``_loop.pyx`` than the one beside it (an edited or checked-out
  source: the compiled module would run old code): a ``RuntimeWarning`` says how to rebuild;
* the environment variable ``DELAYCV_PURE_PYTHON`` is ``1`` (to run or measure the Python loop;
  ``0`` or unset: the compiled loop; any other value is refused with a ``ConfigError``).

:func:`status` says which loop runs and why (``make venv`` prints it).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import warnings
from pathlib import Path
from types import ModuleType

from delaycv.errors import ConfigError

#: The source of the compiled loop.
SOURCE = Path(__file__).with_name("_loop.pyx")
#: The environment variable that selects the Python loop.
PURE_PYTHON = "DELAYCV_PURE_PYTHON"


def source_digest(path: Path = SOURCE) -> str:
    """SHA-256 (hex) of the loop's source, as the build records it in the compiled module."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _load() -> tuple[ModuleType | None, str]:
    value = os.environ.get(PURE_PYTHON, "")
    if value not in ("", "0", "1"):
        raise ConfigError(
            f"{value!r}",
            location=f"environment variable {PURE_PYTHON}",
            expected="1 (the Python loop), 0 or unset (the compiled loop where it is built)",
        )
    if value == "1":
        return None, f"the Python loop: {PURE_PYTHON}=1"
    if importlib.util.find_spec("delaycv.engine._loop") is None:
        return (
            None,
            "the Python loop: the compiled loop is not built (to build it: a C compiler, then "
            "pip install -e . in the checkout)",
        )
    try:
        from delaycv.engine import _loop
    except ImportError as err:  # built for another platform or Python
        return None, f"the Python loop: the compiled loop cannot be loaded ({err})"
    if SOURCE.is_file() and source_digest() != _loop.SOURCE_DIGEST:
        reason = (
            f"the Python loop: the compiled loop {Path(_loop.__file__).name} was not built from "
            f"the {SOURCE.name} beside it (rebuild: make venv, or pip install -e . in the checkout)"
        )
        warnings.warn(f"delaycv runs {reason}", RuntimeWarning, stacklevel=2)
        return None, reason
    return _loop, f"the compiled loop ({Path(_loop.__file__).name})"


LOOP, _STATUS = _load()


def status() -> str:
    """Which fold loop runs, and why."""
    return _STATUS
