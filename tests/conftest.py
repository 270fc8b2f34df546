"""Shared fixtures: the real brackets stream (skipped where ../shared/datasets/ is absent) and the
JVM with MOA. Shared helpers that are not fixtures live in tests/support/."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.paths import shared_file


@pytest.fixture
def brackets_arff() -> Path:
    return shared_file("commit_guru_dataset/cut2years/0_brackets.arff")


@pytest.fixture
def brackets_csv() -> Path:
    return shared_file("commit_guru_dataset/cut2years/0_brackets.csv")


#: The environment variable that makes a machine without MOA learners (JPype, Java, the pinned
#: jar) fail the MOA tests instead of skipping them (CI sets it).
REQUIRE_MOA = "DELAYCV_REQUIRE_MOA"


@pytest.fixture(scope="session")
def moa():
    """The JVM with the pinned MOA jar started in this process, or skip (fail under
    ``DELAYCV_REQUIRE_MOA=1``) with what is missing."""
    import os

    from delaycv.common.errors import ConfigError

    try:
        from delaycv.jvm import learner

        learner.java()
    except ConfigError as err:
        if os.environ.get(REQUIRE_MOA) == "1":
            pytest.fail(f"MOA learners are required ({REQUIRE_MOA}=1): {err}")
        pytest.skip(f"MOA learners are not available here: {err}")
    return learner
