# Stage 3: per-fold tables of the runs -> one tidy table per dataset, and one overall; the runs'
# run.json -> the study's table of runs (what each run cost: time, memory), shown in the report.


rule merge:
    input:
        folds=lambda wildcards: run_files(wildcards.dataset, "folds.parquet"),
    output:
        merged=MERGED,
    log:
        f"{STUDY_LOGS}/merge/{{dataset}}.log",
    conda:
        "../../envs/engine.yaml"
    params:
        code=CODE["merge"],
    script:
        "../../scripts/merge.py"


rule merge_all:
    input:
        folds=expand(MERGED, dataset=DATASETS),
        runs=study_run_files("run.json"),
    output:
        merged=MERGED_ALL,
        # one row per run: wall and CPU seconds, peak memory, RAM-hours (from the run.json files)
        runs=RUNS_TABLE,
        runs_csv=report(
            RUNS_TABLE_CSV,
            caption="../report/runs.rst",
            category="Runs",
            labels=table_labels("time and memory of every run", "csv"),
        ),
        runs_html=report(
            RUNS_TABLE_HTML,
            caption="../report/runs.rst",
            category="Runs",
            labels=table_labels("time and memory of every run", "html"),
        ),
    log:
        f"{STUDY_LOGS}/merge_all.log",
    conda:
        "../../envs/engine.yaml"
    params:
        code=CODE["merge"],
    script:
        "../../scripts/merge.py"
