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

:func:`status` says which loop runs and why (``make venv`` prints it); :func:`run_loops` says it
of every loop a run runs (its fold loop and the metrics' loops: ``run.json``'s ``loops``), and
:func:`slow_loops` warns where one runs without its compiled loop unasked.
"""

from __future__ import annotations

from pathlib import Path

from delaycv.common import native
from delaycv.common.native import PURE_PYTHON
from delaycv.common.words import listed

#: The source of the compiled loop.
SOURCE = Path(__file__).with_name("_loop.pyx")

__all__ = ["LOOP", "PURE_PYTHON", "SOURCE", "run_loops", "slow_loops", "source_digest", "status"]


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


#: a MOA learner's folds without the Java loop: the compiled loop calls MOA for each instance
INSTANCE_BY_INSTANCE = "MOA's learner called instance by instance through JPype"

#: where a loop is named in a run's record (``run.json``'s ``loops``) and in its warning
LOOP_NAMES = {
    "fold": "the folds",
    "effort": "the effort-aware measures",
    "corrected": "the corrected reference",
    "fading": "the fading estimator's sums",
    "libm": "the metrics' exp, log and pow",
}


def run_loops(moa: bool, observed: bool) -> dict[str, str]:
    """Which loop each part of a run runs, and why (``run.json``'s ``loops``): the fold loop (a
    MOA learner's Java loop, :mod:`delaycv.jvm.rows`; river's compiled loop; the Python loop for
    an observer, ``observed``), and the compiled loops of the metrics (each the compiled module
    with its file, or "the Python loop: why")."""
    from delaycv.common import portable
    from delaycv.metrics import corrected, effort, states

    if observed:
        fold = "the Python loop: it serves the observers (the MOA export)"
    elif moa:
        from delaycv.jvm import rows

        fold = rows.status()
        if not rows.USABLE and LOOP is not None:  # (river's loop then calls MOA's learner)
            fold = f"{INSTANCE_BY_INSTANCE}: {fold.removeprefix('the Python loop: ')}"
    else:
        fold = status()
    return {
        "fold": fold,
        "effort": effort.LOOP_STATUS,
        "corrected": corrected.KERNEL_STATUS,
        "fading": states.SUMS_STATUS,
        "libm": portable.STATUS,
    }


def slow_loops(loops: dict[str, str]) -> list[str]:
    """A warning when a part of :func:`run_loops` runs without its compiled loop (in Python, or a
    MOA learner called instance by instance) because that loop is missing (``native.missing``; not
    when ``DELAYCV_PURE_PYTHON`` asks for the Python loops, nor for an observer): the same
    numbers (the corrected reference's up to rounding where its compiled kernel is missing: its
    numpy twin sums in another order, and they differ in the last digits), several times slower
    (a MOA learner's run on git(master), a checkpoint every 30 or 500: 3.6 and 3.1 times)."""
    if native.pure_python():
        return []
    groups: dict[str, list[str]] = {}  # why -> the loops that run in Python for it
    for part, why in loops.items():
        reason = native.missing(why.removeprefix(f"{INSTANCE_BY_INSTANCE}: "))
        if reason is not None:
            groups.setdefault(reason, []).append(LOOP_NAMES[part])
    if not groups:
        return []
    said = "; ".join(f"{listed(names)} ({reason})" for reason, names in groups.items())
    corrected = any(LOOP_NAMES["corrected"] in names for names in groups.values())
    same = "the same numbers" + (" (the corrected reference's up to rounding)" if corrected else "")
    return [
        f"delaycv runs without their compiled loops {said}: {same}, several times slower (a MOA "
        "learner's run on git(master) 3 to 4 times); make venv builds the compiled loops (with a "
        "C compiler, and a JDK for MOA's)"
    ]
