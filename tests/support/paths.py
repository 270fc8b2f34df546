"""The checkout and the shared folder beside it. Real data is read from ../shared/datasets/ beside
the checkout (never copied); a test that needs it skips, with the reason, where it is absent."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
SHARED_DATASETS = SHARED / "datasets"
COMMIT_GURU = SHARED_DATASETS / "commit_guru_dataset"
SPDISC = SHARED_DATASETS / "spdisc-icse19-master" / "datasets"


def shared_file(relative: str) -> Path:
    """Path of a file under ../shared/datasets/, or skip the test with the reason."""
    path = SHARED_DATASETS / relative
    if not path.exists():
        pytest.skip(f"real dataset not available: {path} (the shared datasets folder is absent)")
    return path
