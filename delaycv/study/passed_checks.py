"""River learner specs whose load-time check passed, remembered in the user's cache folder.

A study's load-time check builds each river learner and lets it run two instances
(:func:`delaycv.study.checks.check_study`); that imports river (and scipy with it), about 1.8 s of
CPU at every Snakemake start. A spec that passed is remembered as an empty file in
``<cache>/delaycv/learner-checks/`` (:func:`delaycv.common.cache.cache_dir`), named by the SHA-256
of what the outcome depends on: the spec (as JSON), the installed river's version, the Python
version, the code digest of the check and of the learner builder (:data:`CHECK_MODULES`,
:func:`delaycv.study.digests.source_digest`), and that of the modules of the spec's own classes
and of the modules of one's own they import (``module:Class``:
:func:`delaycv.study.digests.learner_code`). A new spec, another river, another delaycv or
another version of one's own class checks again. A spec that failed is never
remembered, so that its error is made afresh each time. A cache folder that cannot be read or
written only costs the check's time.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import sys
from pathlib import Path
from typing import Any

from delaycv.common.cache import cache_dir
from delaycv.study.digests import learner_code, source_digest

#: the cache folder's subfolder of the specs that passed
FOLDER = "learner-checks"
#: the modules whose code decides whether a spec passes (their imports are followed)
CHECK_MODULES = ("delaycv.study.checks", "delaycv.protocol.learners")


def passed_entry(spec: Any) -> Path | None:
    """The file that says ``spec`` passed (whether or not it exists), or None when ``spec``
    cannot be named (not JSON) or river is not installed. Made once per check: it reads the
    check's code digest and river's version."""
    try:
        text = json.dumps(spec, sort_keys=True, allow_nan=False)
        river = importlib.metadata.version("river")
    except (TypeError, ValueError, importlib.metadata.PackageNotFoundError):
        return None
    code = source_digest(CHECK_MODULES)
    own = learner_code(spec)  # (a class of one's own: its code and its own modules')
    key = hashlib.sha256(f"{text}\0{river}\0{sys.version}\0{code}\0{own}".encode()).hexdigest()
    return cache_dir() / FOLDER / key


def passed_before(entry: Path | None) -> str | None:
    """What the check found of the spec of ``entry`` (:func:`passed_entry`) when it passed
    before, with this river, Python and delaycv (the text :func:`remember_passed` kept); None
    when it did not pass (or the entry cannot be read)."""
    if entry is None:
        return None
    try:
        return entry.read_text()
    except (OSError, UnicodeDecodeError):
        return None


def remember_passed(entry: Path | None, found: str = "") -> None:
    """Remember that the spec of ``entry`` passed, with what the check ``found`` (nothing if
    the cache folder cannot be written)."""
    if entry is None:
        return
    with contextlib.suppress(OSError):
        entry.parent.mkdir(parents=True, exist_ok=True)
        entry.write_text(found)
