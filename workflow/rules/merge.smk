# Stage 3: per-fold tables of the runs -> one tidy table per dataset, and one overall; the runs'
# run.json -> the study's table of runs (what each run cost: time, memory), and the streams -> the
# table of its datasets (what each holds, what its conversion left out), shown in the report.


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
        streams=[stream_path(dataset) for dataset in DATASETS],
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
        # one row per dataset: what its stream holds, what its conversion left out or changed
        datasets_csv=report(
            DATASETS_TABLE_CSV,
            caption="../report/datasets.rst",
            category="Datasets",
            labels=table_labels("the datasets' streams", "csv"),
        ),
        datasets_html=report(
            DATASETS_TABLE_HTML,
            caption="../report/datasets.rst",
            category="Datasets",
            labels=table_labels("the datasets' streams", "html"),
        ),
    log:
        f"{STUDY_LOGS}/merge_all.log",
    conda:
        "../../envs/engine.yaml"
    params:
        code=CODE["merge"],
        datasets=DATASETS,
    script:
        "../../scripts/merge.py"
