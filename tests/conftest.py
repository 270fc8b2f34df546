"""Shared fixtures. Real data is read from ../shared/datasets/ beside the checkout (never copied)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATASETS = REPO.parent / "shared" / "datasets"
COMMIT_GURU = SHARED_DATASETS / "commit_guru_dataset"
SPDISC = SHARED_DATASETS / "spdisc-icse19-master" / "datasets"


def shared_file(relative: str) -> Path:
    """Path of a file under ../shared/datasets/, or skip the test with the reason."""
    path = SHARED_DATASETS / relative
    if not path.exists():
        pytest.skip(f"real dataset not available: {path} (the shared datasets folder is absent)")
    return path


@pytest.fixture
def brackets_arff() -> Path:
    return shared_file("commit_guru_dataset/cut2years/0_brackets.arff")


@pytest.fixture
def brackets_csv() -> Path:
    return shared_file("commit_guru_dataset/cut2years/0_brackets.csv")
