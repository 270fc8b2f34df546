# Stage 4: paired permutation tests between learners (Holm-adjusted, with effect sizes).


rule permutation_tests:
    input:
        merged=MERGED,
    output:
        tests=f"{TESTS_DIR}/tests.parquet",
        csv=report(
            f"{TESTS_DIR}/tests.csv",
            caption="../report/tests.rst",
            category="Permutation tests",
            subcategory="{dataset}",
            labels={"dataset": "{dataset}", "table": "pairwise tests"},
        ),
    log:
        "logs/permutation_tests/{dataset}.log",
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        tests=TEST_OPTIONS,
        code=CODE["compare"],
    script:
        "../../scripts/permutation_tests.py"
