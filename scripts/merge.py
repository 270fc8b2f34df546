"""Snakemake adapter of rules `merge` and `merge_all`: per-fold tables -> one tidy Parquet table
(delaycv.stages.merge.merge). `merge` reads the folds.parquet of every run of one dataset;
`merge_all` reads the per-dataset merged tables, and writes the study's table of runs from every
run's run.json too, as Parquet, CSV and the report's page, and the table of its datasets from
their stream files, as CSV and the report's page.
"""

from delaycv.study.job import stage_job

with stage_job(snakemake, "merge"):
    from delaycv.stages.merge import merge

    output = snakemake.output
    runs = hasattr(output, "runs")  # merge_all: the study's table of runs, and its page
    merged = merge(
        list(snakemake.input.folds),
        output.merged,
        runs=list(snakemake.input.runs) if runs else None,
        runs_out=output.runs if runs else None,
        runs_csv=output.runs_csv if runs else None,
        runs_page=output.runs_html if runs else None,
        streams=dict(zip(snakemake.params.datasets, snakemake.input.streams, strict=True))
        if runs
        else None,
        datasets_csv=output.datasets_csv if runs else None,
        datasets_page=output.datasets_html if runs else None,
    )
    print(f"{len(snakemake.input.folds)} tables, {merged.rows} rows -> {output.merged}")
    if runs:
        print(f"{len(merged.runs)} runs -> {output.runs}, {output.runs_html}")
        print(f"{len(merged.datasets)} datasets -> {output.datasets_csv}, {output.datasets_html}")
