"""delaycv's compiled modules: each is loaded only when it was built from the source beside it.

Five inner loops exist twice, in Python (the form the compiled one must match) and compiled by
Cython (the same steps with C numbers, bit for bit the same outputs): the fold loop
(``engine/_loop.pyx``, loaded by ``delaycv.engine.compiled``), the effort-aware measures' loop
(``metrics/_effort_loop.pyx``, twin of ``metrics/effort_loop.py``), the corrected reference's
fold state (``metrics/_corrected_kernel.pyx``, twin of ``metrics/corrected_kernel.py``), the
fading estimator's running sums (``metrics/_fading_sums.pyx``, twin of ``metrics/fading_sums.py``)
and the C library's ``exp``, ``log`` and ``pow`` on arrays (``common/_libm.pyx``, twin of
``common/libm.py``).
The package's install builds
them (``pip install -e .``, ``make venv``: Cython and a C compiler); ``setup.py`` records the
SHA-256 of each source in its module (``SOURCE_DIGEST``). A compiled module is not used when

* it was not built, or cannot be loaded (another platform or Python);
* it was built from another source than the one beside it (an edited or checked-out source: the
  module would run old code): a ``RuntimeWarning`` says how to rebuild;
* the environment variable ``DELAYCV_PURE_PYTHON`` is ``1`` (``0`` or unset: the compiled modules
  where they are built; any other value is refused with a ``ConfigError``).

Then the Python twin runs, with the same results.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from delaycv.common.errors import ConfigError

#: The environment variable that selects the Python loops.
PURE_PYTHON = "DELAYCV_PURE_PYTHON"

#: the words of a status (:func:`load_compiled`'s, and the Java fold loop's,
#: ``delaycv.jvm.build.jar_status``) whose compiled loop is missing: not built, or built for
#: another platform or Python
MISSING = ("is not built", "cannot be loaded")


def missing(status: str) -> str | None:
    """Why the compiled loop of ``status`` is missing (:data:`MISSING`), without the advice on
    building it; None when it runs, was not asked for (:data:`PURE_PYTHON`), or was built from
    another source (which :func:`load_compiled` warns about itself).

    >>> missing("the Python loop: the compiled loop is not built (to build it: a C compiler, ...)")
    'the compiled loop is not built'
    >>> missing("the Python loop: DELAYCV_PURE_PYTHON=1") is None
    True
    """
    if not any(words in status for words in MISSING):
        return None
    return status.removeprefix("the Python loop: ").split(" (to build it")[0]


def source_digest(path: Path) -> str:
    """SHA-256 (hex) of a compiled module's source, as the build records it in the module."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def pure_python() -> bool:
    """Whether ``DELAYCV_PURE_PYTHON`` asks for the Python loops (a value other than 1, 0 or
    nothing is a ``ConfigError``)."""
    value = os.environ.get(PURE_PYTHON, "")
    if value not in ("", "0", "1"):
        raise ConfigError(
            f"{value!r}",
            location=f"environment variable {PURE_PYTHON}",
            expected="1 (the Python loops), 0 or unset (the compiled loops where they are built)",
        )
    return value == "1"


def load_compiled(
    name: str, source: Path, what: str, digest: Callable[[], str] | None = None
) -> tuple[ModuleType | None, str]:
    """The compiled module ``name`` (dotted) built from ``source``, or None; and the reason, in
    the words of ``what`` (e.g. "the compiled loop") for the Python side ("the Python loop: ...").
    ``digest`` gives the source's digest (default: :func:`source_digest` of ``source``)."""
    if pure_python():
        return None, f"the Python loop: {PURE_PYTHON}=1"
    if importlib.util.find_spec(name) is None:
        return (
            None,
            f"the Python loop: {what} is not built (to build it: a C compiler, then "
            "pip install -e . in the checkout)",
        )
    package, _, module_name = name.rpartition(".")
    try:
        module = getattr(__import__(package, fromlist=[module_name]), module_name)
    except (ImportError, AttributeError) as err:  # built for another platform or Python
        return None, f"the Python loop: {what} cannot be loaded ({err})"
    current = digest() if digest is not None else source_digest(source)
    if source.is_file() and current != module.SOURCE_DIGEST:
        reason = (
            f"the Python loop: {what} {Path(module.__file__).name} was not built from the "
            f"{source.name} beside it (rebuild: make venv, or pip install -e . in the checkout)"
        )
        warnings.warn(f"delaycv runs {reason}", RuntimeWarning, stacklevel=3)
        return None, reason
    return module, f"{what} ({Path(module.__file__).name})"


def load(name: str, twin: ModuleType) -> tuple[ModuleType, str]:
    """The compiled module ``name`` if it can be used (:func:`load_compiled`; its source is the
    ``.pyx`` of the same name beside ``twin``), else the Python ``twin``; and which one, why."""
    source = Path(twin.__file__).with_name(name.rpartition(".")[2] + ".pyx")
    module, reason = load_compiled(name, source, "the compiled loop")
    return (module if module is not None else twin), reason
