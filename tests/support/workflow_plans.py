"""Helpers of the workflow's plan tests (tests/workflow/): the tiny config, the jobs a change
plans, a user's study in a copy of the workflow."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import yaml

from tests.support.workflow_copy import REPO, copy_workflow, write_commit_guru_csv

#: The tiny study (2 learners x 2 policies on a small generated stream).
SMALL = REPO / "config" / "test-small.yaml"


def is_stream_of(path: str, dataset: str) -> bool:
    """Whether ``path`` is the converted stream of ``dataset``, keyed by the dataset's spec."""
    pattern = rf"resources/generated/streams/{re.escape(dataset)}/[0-9a-f]{{12}}\.parquet"
    return re.fullmatch(pattern, path) is not None


AGGREGATION = {
    ("merge", (("dataset", "tiny"),)),
    ("merge_all", ()),
    ("compare", (("dataset", "tiny"),)),
    ("figures", (("dataset", "tiny"),)),
    ("rankings", ()),
    ("all", ()),
}


def evaluate_job(learner: str, policy: str, seed: int = 1, dataset: str = "tiny"):
    wildcards = (
        ("dataset", dataset),
        ("learner", learner),
        ("seed", str(seed)),
        ("policy", policy),
    )
    return ("evaluate", wildcards)


ALL_EVALUATE = {evaluate_job(lr, p) for lr in ("nb", "lr") for p in ("ideal", "hitl_7d_90d")}


def without_keys(jobs):
    """``jobs`` without their ``settings`` and ``stream`` wildcards (the keys of a shared run
    directory and of a converted stream)."""
    keys = ("settings", "stream")
    return {(rule, tuple(w for w in wildcards if w[0] not in keys)) for rule, wildcards in jobs}


def with_configs(tmp_path: Path) -> Path:
    """A copy of the workflow with the default config.yaml and the shipped config/ folder."""
    workdir = copy_workflow(tmp_path / "wf", REPO / "config.yaml", library=False)
    shutil.copytree(REPO / "config", workdir / "config")
    return workdir


ONE_LEARNER = {
    "datasets": {"mine": {"generate": {"rows": 300, "seed": 1}}},
    "learners": {"nb": {"class": "river.naive_bayes.GaussianNB"}},
    "policies": {"ideal": {"preset": "ideal"}, "delay_7d": {"preset": "delay", "window": "7d"}},
    "seeds": [1],
}


def user_study(tmp_path: Path, **changes) -> Path:
    """A copy of the workflow (config.yaml: the default) with a raw CSV, a Parquet table that is
    not a stream, and the user's study my.yaml (ONE_LEARNER with ``changes``)."""
    workdir = with_configs(tmp_path)
    write_commit_guru_csv(workdir / "data" / "raw.csv", rows=50)
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(
        pa.table({"learner": ["nb"], "gmean": [0.5]}), workdir / "data" / "table.parquet"
    )
    (workdir / "my.yaml").write_text(yaml.safe_dump({**ONE_LEARNER, **changes}))
    return workdir
