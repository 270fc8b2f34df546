# Stage 4b: rankings of learners within each policy and of policies within each learner: across
# datasets (Friedman with Nemenyi's post-hoc and a critical-difference diagram; Scott-Knott ESD),
# with a note instead of a test when the study has fewer than 3 datasets, and within each dataset
# over its (seed, fold) pairs (Scott-Knott ESD). The report shows the pages and the figures, each
# figure twice: its PNG (drawn to be read at the report's width) and its PDF (shown in the report's
# PDF viewer, which zooms).
rule rankings:
    input:
        merged=expand(MERGED, dataset=DATASETS),
    output:
        friedman=f"{RANKINGS_DIR}/friedman.parquet",
        friedman_csv=report(
            f"{RANKINGS_DIR}/friedman.csv",
            caption="../report/rankings.rst",
            category="Rankings",
            subcategory="tables",
            labels=table_labels("Friedman and Nemenyi", "csv"),
        ),
        nemenyi_csv=report(
            f"{RANKINGS_DIR}/nemenyi.csv",
            caption="../report/rankings.rst",
            category="Rankings",
            subcategory="tables",
            labels=table_labels("Nemenyi p-values of every pair", "csv"),
        ),
        scott_knott=f"{RANKINGS_DIR}/scott_knott.parquet",
        scott_knott_csv=report(
            f"{RANKINGS_DIR}/scott_knott.csv",
            caption="../report/rankings.rst",
            category="Rankings",
            subcategory="tables",
            labels=table_labels("Scott-Knott ESD across datasets", "csv"),
        ),
        html=report(
            f"{RANKINGS_DIR}/rankings.html",
            caption="../report/rankings.rst",
            category="Rankings",
            subcategory="tables",
            labels=table_labels("rankings across datasets", "html"),
        ),
        within=f"{RANKINGS_DIR}/within.parquet",
        within_csv=report(
            f"{RANKINGS_DIR}/within.csv",
            caption="../report/rankings.rst",
            category="Rankings",
            subcategory="tables",
            labels=table_labels("Scott-Knott ESD within each dataset", "csv"),
        ),
        within_html=report(
            f"{RANKINGS_DIR}/within.html",
            caption="../report/rankings.rst",
            category="Rankings",
            subcategory="tables",
            labels=table_labels("Scott-Knott ESD within each dataset", "html"),
        ),
        figures=report(
            directory(f"{RANKINGS_DIR}/figures"),
            patterns=[RANKING_FIGURE_PATTERN],
            caption="../report/rankings.rst",
            category="Rankings",
            subcategory=ranking_figure_kind,
            labels=ranking_figure_labels,
        ),
    log:
        f"{STUDY_LOGS}/rankings.log",
    conda:
        "../../envs/stats.yaml"
    threads: 1
    resources:
        mem_mb=by_attempt(4000),
        runtime=by_attempt(60),
    params:
        settings=RANKING_SETTINGS,
        code=CODE["rankings"],
        # for the caption
        version=RANKINGS.version,
        alpha=RANKINGS.alpha,
        figure_metrics=", ".join(RANKINGS.figure_metrics),
        datasets=len(DATASETS),
    script:
        "../../scripts/rankings.py"
