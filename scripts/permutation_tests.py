"""Snakemake adapter of rule `permutation_tests`: a merged table -> pairwise learner tests.

Runs delaycv.compare.run_tests with the config's `tests` section and writes tests.parquet and
tests.csv (the report shows the CSV), both atomically.
"""

import json
import sys

sys.stderr = sys.stdout = open(snakemake.log[0], "w", buffering=1)  # noqa: SIM115

import pandas as pd  # noqa: E402

from delaycv.atomic import atomic_path  # noqa: E402
from delaycv.compare import run_tests  # noqa: E402

settings = json.loads(snakemake.params.tests)
table = pd.read_parquet(snakemake.input.merged)
tests = run_tests(
    table,
    metrics=settings["metrics"],
    references=settings["references"],
    resamples=settings["resamples"],
    alpha=settings["alpha"],
    seed=settings["seed"],
    checkpoints=settings["checkpoints"],
)
with atomic_path(snakemake.output.tests) as tmp:
    tests.to_parquet(tmp, index=False)
with atomic_path(snakemake.output.csv) as tmp:
    tests.to_csv(tmp, index=False)
print(f"{len(tests)} tests -> {snakemake.output.tests}")
