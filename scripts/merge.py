"""Snakemake adapter of rules `merge` and `merge_all`: per-fold tables -> one tidy Parquet table.

`merge` reads the folds.parquet of every run of one dataset; `merge_all` reads the per-dataset
merged tables. Both concatenate in input order, a row group at a time (delaycv.tables.results.merge_files),
and write atomically. `merge_all` also writes the study's table of runs from every run's run.json
(delaycv.tables.costs: time, peak memory and RAM-hours of each run), as Parquet, CSV and the report's page.
"""

import sys

sys.stderr = sys.stdout = open(snakemake.log[0], "w", buffering=1)  # noqa: SIM115

from delaycv.common.interrupt import terminate_on_sigterm  # noqa: E402
from delaycv.study.digests import check_code, end_job, one_line_errors  # noqa: E402

terminate_on_sigterm()  # a stopped job (SIGTERM) removes its temporaries and exits with 143

check_code("merge", snakemake.params.code)  # the code that runs is the code hashed
one_line_errors("merge")  # an error: one line in this job's log, exit 2

from delaycv.tables.results import merge_files  # noqa: E402

rows = merge_files(list(snakemake.input.folds), snakemake.output.merged)
print(f"{len(snakemake.input.folds)} tables, {rows} rows -> {snakemake.output.merged}")
if hasattr(snakemake.output, "runs"):  # merge_all: the study's table of runs, and its page
    from delaycv.tables.costs import write_runs

    runs = write_runs(
        list(snakemake.input.runs),
        parquet=snakemake.output.runs,
        csv=snakemake.output.runs_csv,
        html=snakemake.output.runs_html,
    )
    print(f"{len(runs)} runs -> {snakemake.output.runs}, {snakemake.output.runs_html}")
end_job()  # outputs written and closed: no teardown
