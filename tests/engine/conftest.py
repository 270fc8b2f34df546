"""The engine tests' fixture: the metrics replaced by recorders of what the engine feeds them."""

from __future__ import annotations

import pytest

import delaycv.metrics as metrics_module
from tests.engine.brute_force_check import RecordingMetrics


@pytest.fixture
def recording(monkeypatch):
    RecordingMetrics.made = []
    monkeypatch.setattr(metrics_module, "Metrics", RecordingMetrics, raising=False)
    monkeypatch.setattr(metrics_module, "METRICS", ("classified",), raising=False)
    monkeypatch.setattr(metrics_module, "Cumulative", lambda: None, raising=False)
    return RecordingMetrics
