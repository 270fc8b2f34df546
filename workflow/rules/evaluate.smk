# Stage 2: one evaluation per (dataset, learner, seed, policy): k folds -> a run directory.


rule evaluate:
    input:
        stream=stream_input,
    output:
        folds=f"{RUN_DIR}/folds.parquet",
        summary=f"{RUN_DIR}/summary.parquet",
        run=f"{RUN_DIR}/run.json",
    log:
        RUN_LOG,
    benchmark:
        RUN_BENCHMARK
    conda:
        "../../envs/engine.yaml"
    threads: 1
    resources:
        mem_mb=by_attempt(CONFIG["resources"]["evaluate_mem_mb"]),
        runtime=by_attempt(CONFIG["resources"]["evaluate_runtime"]),
    params:
        learner=learner_param,
        learner_code=learner_code_param,
        policy=policy_param,
        options=EVALUATION_OPTIONS,
        code=CODE["evaluate"],
    script:
        "../../scripts/evaluate.py"
