# Stage 4 (delaycv.stages.compare): paired permutation tests between learners (Holm-adjusted, with effect sizes), the
# bias of realistic evaluation (observed-label against true-label values) and the policy contrasts
# (every policy against the reference policy, when the config has one). The report shows each
# table as an HTML page (readable in the report) and offers the CSV (every column) as a download.


rule compare:
    input:
        merged=MERGED,
    output:
        **contrast_outputs(),
        tests=f"{TESTS_DIR}/tests.parquet",
        html=report(
            f"{TESTS_DIR}/tests.html",
            caption="../report/tests.rst",
            category="Permutation tests",
            subcategory="{dataset}",
            labels=table_labels("learner pairs", "html", "{dataset}"),
        ),
        csv=report(
            f"{TESTS_DIR}/tests.csv",
            caption="../report/tests.rst",
            category="Permutation tests",
            subcategory="{dataset}",
            labels=table_labels("learner pairs", "csv", "{dataset}"),
        ),
        strip=f"{TESTS_DIR}/strip.parquet",
        bias=f"{TESTS_DIR}/bias.parquet",
        bias_html=report(
            f"{TESTS_DIR}/bias.html",
            caption="../report/bias.rst",
            category="Permutation tests",
            subcategory="{dataset}",
            labels=table_labels("bias of realistic evaluation", "html", "{dataset}"),
        ),
        bias_csv=report(
            f"{TESTS_DIR}/bias.csv",
            caption="../report/bias.rst",
            category="Permutation tests",
            subcategory="{dataset}",
            labels=table_labels("bias of realistic evaluation", "csv", "{dataset}"),
        ),
        # every policy against the reference policy (config contrasts; none when it is null)
    log:
        f"{STUDY_LOGS}/compare/{{dataset}}.log",
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=by_attempt(4000),
        runtime=by_attempt(60),
    params:
        settings=COMPARE_SETTINGS,
        code=CODE["compare"],
        # for the captions
        alpha=COMPARE.alpha,
        resamples=COMPARE.resamples,
        metrics=", ".join(COMPARE.metrics),
        reference_policy=CONTRAST_REFERENCE or "",
    script:
        "../../scripts/compare.py"
