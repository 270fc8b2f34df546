"""A MOA learner's spec, read and checked without Java: :func:`moa_spec`, the one normaliser.

A MOA learner is given as MOA's command line of the classifier (``trees.HoeffdingTree -g 200``),
in one of three forms: the string ``"moa:<command line>"`` (the command line's ``--learner``,
Python), a mapping ``{moa: <command line>, seed?: <int>, heap?: <size>}`` (a study's learner, a
spec file), or an object that carries its spec as ``moa_spec`` (a
:class:`delaycv.jvm.learner.MoaClassifier`). :func:`moa_spec` turns each into the one normal
form, a dict with the command line's white space collapsed and only the keys given, checking the
keys and the types and ranges of their values; MOA itself checks the command line when
:mod:`delaycv.jvm` builds the classifier.

The heap is the JVM's maximum heap (Java's ``-Xmx``), from the key ``heap`` or the environment
variable :data:`HEAP_ENV`; :func:`check_heap` checks either before any JVM starts: a size Java
reads, from :data:`MIN_HEAP` (a JVM with MOA's classes starts with it) to the machine's memory.

>>> moa_spec("moa:trees.HoeffdingTree   -g 200")
{'moa': 'trees.HoeffdingTree -g 200'}
>>> moa_spec({"moa": "meta.OzaBag -l trees.HoeffdingTree", "seed": 1, "heap": "512m"})
{'moa': 'meta.OzaBag -l trees.HoeffdingTree', 'seed': 1, 'heap': '512m'}
>>> moa_label({"moa": "(meta.OzaBag -s 5)"})
'OzaBag'
"""

from __future__ import annotations

import os
import re
from typing import Any

from delaycv.common.errors import ConfigError

#: a MOA learner given as one string: ``"moa:<MOA command line>"``
MOA_PREFIX = "moa:"
#: the keys of a MOA learner's mapping: the command line, a seed for every fold, the JVM's heap
MOA_KEYS = ("moa", "seed", "heap")
#: the attribute of an object that carries a MOA spec (:class:`delaycv.jvm.learner.MoaClassifier`)
SPEC_ATTRIBUTE = "moa_spec"
EXPECTED = "a MOA classifier's command line such as 'trees.HoeffdingTree -g 200'"
#: the environment variable giving the heap of a JVM whose learner sets none
HEAP_ENV = "DELAYCV_JVM_HEAP"
#: the smallest heap accepted: a JVM with MOA's classes starts and runs HoeffdingTree on a
#: stream of 12k instances with it (with 8m it runs out of memory making a chunk's instances;
#: with 4m JPype cannot start it)
MIN_HEAP = 16 * 2**20
_HEAP = re.compile(r"^([1-9][0-9]*)([kKmMgG]?)$")
_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30}


def is_moa_spec(spec: Any) -> bool:
    """Whether ``spec`` is a MOA learner's: ``"moa:..."``, a mapping with ``moa``, or an object
    that carries a MOA spec (:data:`SPEC_ATTRIBUTE`)."""
    if isinstance(spec, str):
        return spec.startswith(MOA_PREFIX)
    if isinstance(spec, dict):
        return "moa" in spec
    return isinstance(getattr(spec, SPEC_ATTRIBUTE, None), dict)


def moa_spec(spec: Any, where: str = "learner") -> dict:
    """``spec`` (any form of the module docstring) as ``{moa, seed?, heap?}``: the command line's
    white space collapsed, the keys and the types of their values checked; a mistake is a
    :class:`~delaycv.common.errors.ConfigError` at the key ``where`` (``learners.ht``)."""
    carried = getattr(spec, SPEC_ATTRIBUTE, None)
    if isinstance(carried, dict):
        spec = carried
    if isinstance(spec, str):
        spec = {"moa": spec.removeprefix(MOA_PREFIX)}
    if not isinstance(spec, dict):
        raise ConfigError(
            f"MOA learner spec is {type(spec).__name__}",
            location=f"key {where}",
            expected="moa:<command line>, or a mapping with moa (and optionally seed and heap)",
        )
    unknown = sorted(set(spec) - set(MOA_KEYS), key=str)
    if unknown:
        raise ConfigError(
            f"unknown key(s) {', '.join(map(str, unknown))} of a MOA learner",
            location=f"key {where}.{unknown[0]}",
            expected="moa, and optionally seed and heap",
        )
    text = spec.get("moa")
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"MOA learner {text!r}", location=f"key {where}.moa", expected=EXPECTED)
    out: dict[str, Any] = {"moa": " ".join(text.split())}
    seed = spec.get("seed")
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ConfigError(
                f"seed {seed!r}", location=f"key {where}.seed", expected="an integer (Java int)"
            )
        if not -(2**31) <= seed < 2**31:
            raise ConfigError(
                f"seed {seed}",
                location=f"key {where}.seed",
                expected="a Java int, -2^31 .. 2^31-1",
            )
        out["seed"] = seed
    heap = check_heap(spec.get("heap"), f"key {where}.heap")
    if heap is not None:
        out["heap"] = heap
    return out


def moa_label(spec: Any) -> str:
    """A short name of a MOA learner: its classifier's class name (``HoeffdingTree``)."""
    first = moa_spec(spec)["moa"].split(" ", 1)[0].strip("()")
    return first.split(".")[-1] or "moa"


def machine_memory() -> int | None:
    """The machine's physical memory in bytes (None where the system does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):  # pragma: no cover - every Linux says
        return None


def heap_bytes(heap: str) -> int:
    """The bytes of a heap size as Java's ``-Xmx`` reads it (``512m``; no unit: bytes)."""
    found = _HEAP.match(heap)
    if found is None:
        raise ValueError(heap)
    return int(found[1]) * _UNITS[found[2].lower()]


def gib(size: float) -> str:
    """``size`` bytes in GiB, as a reader wants it (``7.8 GiB``)."""
    return f"{size / 2**30:.1f} GiB"


def check_heap(heap: Any, where: str = "key heap") -> str | None:
    """``heap`` as Java's ``-Xmx`` takes it (``512m``, ``4g``, a byte count), or None; a size
    Java cannot read, or one outside :data:`MIN_HEAP` .. the machine's memory, is a
    :class:`~delaycv.common.errors.ConfigError` at ``where`` (a key, or the environment
    variable) before any JVM starts."""
    if heap is None:
        return None
    text = str(heap).strip()
    if isinstance(heap, bool) or not _HEAP.match(text):
        raise ConfigError(
            f"heap {heap!r}", location=where, expected="a size such as 512m or 4g (Java's -Xmx)"
        )
    size = heap_bytes(text)
    memory = machine_memory()
    if size < MIN_HEAP or (memory is not None and size > memory):
        most = f"this machine's memory, {gib(memory)}" if memory is not None else "no limit"
        what = (
            "less than a JVM with MOA runs with"
            if size < MIN_HEAP
            else "more than this machine has"
        )
        raise ConfigError(
            f"heap {text} is {what}",
            location=where,
            expected=f"a size from {MIN_HEAP // 2**20}m to {most}",
        )
    return text
