"""Snakemake adapter of rules `merge` and `merge_all`: per-fold tables -> one tidy Parquet table
(delaycv.stages.merge.merge). `merge` reads the folds.parquet of every run of one dataset;
`merge_all` reads the per-dataset merged tables, and writes the study's table of runs from every
run's run.json too, as Parquet, CSV and the report's page.
"""

import sys

sys.stderr = sys.stdout = open(snakemake.log[0], "w", buffering=1)  # noqa: SIM115

from delaycv.common.interrupt import terminate_on_sigterm  # noqa: E402
from delaycv.study.digests import check_code, end_job, one_line_errors  # noqa: E402

terminate_on_sigterm()  # a stopped job (SIGTERM) removes its temporaries and exits with 143
check_code("merge", snakemake.params.code)  # the code that runs is the code hashed
one_line_errors("merge")  # an error: one line in this job's log, exit 2

from delaycv.stages.merge import merge  # noqa: E402

output = snakemake.output
runs = hasattr(output, "runs")  # merge_all: the study's table of runs, and its page
merged = merge(
    list(snakemake.input.folds),
    output.merged,
    runs=list(snakemake.input.runs) if runs else None,
    runs_out=output.runs if runs else None,
    runs_csv=output.runs_csv if runs else None,
    runs_html=output.runs_html if runs else None,
)
print(f"{len(snakemake.input.folds)} tables, {merged.rows} rows -> {output.merged}")
if runs:
    print(f"{len(merged.runs)} runs -> {output.runs}, {output.runs_html}")
end_job()  # outputs written and closed: no teardown
