"""Settings as plain data: what a frozen settings dataclass records of itself (the workflow's
params, ``run.json``), JSON's kinds only.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Example:
...     metrics: tuple = ("gmean", "fpr_1")
...     checkpoints: object = None
>>> record_of(Example(checkpoints={"fractions": (0.5, 1.0)}))
{'metrics': ['gmean', 'fpr_1'], 'checkpoints': {'fractions': [0.5, 1.0]}}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any


def plain(value: Any) -> Any:
    """``value`` with its tuples as lists and its mappings as dicts, at every depth."""
    if isinstance(value, Mapping):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


def record_of(settings: Any) -> dict[str, Any]:
    """The fields of the dataclass instance ``settings`` as plain data (:func:`plain`), in their
    order."""
    return {field.name: plain(getattr(settings, field.name)) for field in fields(settings)}
