"""Snakemake adapter of rule `figures`: merged table + tests -> a folder of figures (PNG and PDF)."""

import json
import sys

sys.stderr = sys.stdout = open(snakemake.log[0], "w", buffering=1)  # noqa: SIM115

import pandas as pd  # noqa: E402

from delaycv.atomic import atomic_dir  # noqa: E402
from delaycv.plots import draw_figures  # noqa: E402

settings = json.loads(snakemake.params.figures)
alpha = json.loads(snakemake.params.tests)["alpha"]
table = pd.read_parquet(snakemake.input.merged)
tests = pd.read_parquet(snakemake.input.tests)
with atomic_dir(snakemake.output.figures) as tmp:
    written = draw_figures(table, tests, tmp, alpha=alpha, **settings)
print(f"figures -> {snakemake.output.figures}: {written}")
