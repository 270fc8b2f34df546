"""Shared fixtures: the real brackets stream (skipped where ../shared/datasets/ is absent) and the
JVM with MOA. Shared helpers that are not fixtures live in tests/support/."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.paths import REPO, shared_file

#: The longest test modules, longest first (their time in the parallel pass on 2 cores). `make test`
#: gives each module to one worker in collection order (``--dist loadscope
#: --no-loadscope-reorder``): the longest start first, so that the workers end together. A module
#: that becomes one of the longest belongs here; a name here that is no module stops the run.
LONGEST_FIRST = (
    "tests/workflow/test_workflow_plans.py",
    "tests/workflow/test_reruns.py",
    "tests/workflow/test_slurm.py",
    "tests/workflow/test_workflow_run.py",
    "tests/stages/test_cli_and_workflow_write_the_same_files.py",
    "tests/report/test_report_in_a_browser.py",
    "tests/workflow/test_config_mistakes.py",
    "tests/protocol/test_replicates_are_independent.py",
    "tests/workflow/test_conda_envs.py",
    "tests/stages/test_commands_without_options.py",
    "tests/jvm/test_moa_learners.py",
    "tests/workflow/test_interruptions.py",
    "tests/metrics/test_corrected_reference.py",
)


def pytest_collection_modifyitems(config, items) -> None:
    """The longest modules first (:data:`LONGEST_FIRST`), the others in their order."""
    missing = [name for name in LONGEST_FIRST if not (REPO / name).is_file()]
    if missing:
        raise pytest.UsageError(f"tests/conftest.py: LONGEST_FIRST names no module: {missing}")
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.partition("::")[0], len(rank)))


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
