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


def flip_page_byte(path: Path, column: str, row_group: int = 0) -> int:
    """Flip one bit in the middle of the data of ``column``'s chunk in a Parquet file (inside a
    data page: past the page header), as a bad disk or a bad copy would; return the offset."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    group = meta.row_group(row_group)
    names = [group.column(i).path_in_schema for i in range(group.num_columns)]
    chunk = group.column(names.index(column))
    begin = chunk.data_page_offset
    if chunk.has_dictionary_page and chunk.dictionary_page_offset is not None:
        begin = min(begin, chunk.dictionary_page_offset)
    end = begin + chunk.total_compressed_size  # the data page(s) run from data_page_offset to end
    offset = chunk.data_page_offset + 2 * (end - chunk.data_page_offset) // 3
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))
    return offset


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
