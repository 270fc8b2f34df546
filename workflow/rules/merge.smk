# Stage 3: per-fold tables of the runs -> one tidy table per dataset, and one overall.


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
    output:
        merged=MERGED_ALL,
    log:
        f"{STUDY_LOGS}/merge_all.log",
    conda:
        "../../envs/engine.yaml"
    params:
        code=CODE["merge"],
    script:
        "../../scripts/merge.py"
