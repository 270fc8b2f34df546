"""The compiled modules in tests: where they must be built (CI sets ``DELAYCV_REQUIRE_COMPILED_LOOP``),
a test that would compare one with its Python twin fails instead of skipping."""

from __future__ import annotations

import os
from types import ModuleType

#: The environment variable that makes a missing compiled module (or Java fold loop) a failure
REQUIRE_COMPILED = "DELAYCV_REQUIRE_COMPILED_LOOP"


def compiled_required() -> bool:
    """Whether :data:`REQUIRE_COMPILED` asks for the compiled modules (a value but "" or "0")."""
    return os.environ.get(REQUIRE_COMPILED, "") not in ("", "0")


def compiled_or_none(loaded: ModuleType, twin: ModuleType, status: str, what: str):
    """The compiled module ``delaycv.common.native.load`` gave (``loaded``), or None where it gave
    the Python ``twin``; a RuntimeError naming ``what`` and ``status`` where they are required."""
    if loaded is not twin:
        return loaded
    if compiled_required():
        raise RuntimeError(f"{what} must be in use ({REQUIRE_COMPILED} is set): {status}")
    return None
