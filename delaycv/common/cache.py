"""The user's cache folder of delaycv: files that can be made again, kept between runs.

``<cache>/delaycv``, where ``<cache>`` is ``$XDG_CACHE_HOME`` or ``~/.cache``. It holds the
pinned MOA jar (:mod:`delaycv.jvm.jar`) and what the code digests learnt of each source file
(:mod:`delaycv.study.digests`). Removing it loses nothing but time.

Imports: the standard library only.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/delaycv``, or ``~/.cache/delaycv`` (not created here)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "delaycv"
