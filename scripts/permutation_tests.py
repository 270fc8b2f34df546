"""Snakemake adapter of rule `permutation_tests`: a merged table -> pairwise learner tests.

Runs delaycv.stats.compare with the config's `tests` section and writes, atomically:
tests.parquet/.csv/.html (at the configured checkpoints), strip.parquet (the same tests at every
checkpoint, for the figures' significance strip), bias.parquet/.csv/.html (the bias of realistic
evaluation: observed-label against true-label values) and, when the config has a reference policy,
contrasts.parquet/.csv/.html (every policy against it, delaycv.stats.contrasts). The HTML pages are the tables as the report
shows them (delaycv.study.report); the CSV files hold every column. The log has one line per
stage with the seconds elapsed since the start.
"""

import json
import sys
import time

sys.stderr = sys.stdout = open(snakemake.log[0], "w", buffering=1)  # noqa: SIM115

from delaycv.common.interrupt import terminate_on_sigterm  # noqa: E402
from delaycv.study.digests import check_code, end_job, one_line_errors  # noqa: E402

terminate_on_sigterm()  # a stopped job (SIGTERM) removes its temporaries and exits with 143

check_code("compare", snakemake.params.code)  # the code that runs is the code hashed
one_line_errors("permutation_tests")  # an error: one line in this job's log, exit 2

import pandas as pd  # noqa: E402

from delaycv.common.atomic import atomic_path  # noqa: E402
from delaycv.stats.bias import bias_tests  # noqa: E402
from delaycv.stats.checkpoints import choose_checkpoints, untested_notes  # noqa: E402
from delaycv.stats.contrasts import policy_contrasts  # noqa: E402
from delaycv.stats.learner_tests import run_tests  # noqa: E402
from delaycv.stats.paired import table_columns  # noqa: E402
from delaycv.study.report import bias_html, contrasts_html, tests_html  # noqa: E402
from delaycv.tables.results import read_table  # noqa: E402

START = time.perf_counter()


def log(message: str) -> None:
    print(f"[{time.perf_counter() - START:6.1f} s] {message}")


settings = json.loads(snakemake.params.tests)
table = read_table(snakemake.input.merged, table_columns(settings["metrics"]))
log(f"read {snakemake.input.merged}: {len(table)} rows")
common = {
    "metrics": settings["metrics"],
    "references": settings["references"],
    "resamples": settings["resamples"],
    "alpha": settings["alpha"],
    "seed": settings["seed"],
}
log(f"strip: tests of {', '.join(settings['metrics'])} at every checkpoint")
strip = run_tests(table, checkpoints="all", progress=lambda m: log(f"strip: {m}"), **common)
checkpoints = settings["checkpoints"]
for row in choose_checkpoints(table, checkpoints).itertuples():
    if row.note:
        what = "a row with no test" if pd.isna(row.checkpoint) else "noted in the tables"
        log(f"checkpoints: {row.at} of dataset {row.dataset}: {row.note} ({what})")
if checkpoints == "all":
    tests = strip
else:
    log(f"tests: at checkpoints {checkpoints}")
    tests = run_tests(
        table, checkpoints=checkpoints, progress=lambda m: log(f"tests: {m}"), **common
    )
log(f"bias: observed against true labels at checkpoints {checkpoints}")
bias = bias_tests(
    table,
    metrics=settings["metrics"],
    resamples=settings["resamples"],
    seed=settings["seed"],
    checkpoints=checkpoints,
    progress=lambda m: log(f"bias: {m}"),
)
reference_policy = json.loads(snakemake.params.contrasts)["reference"]
contrasts = None
if reference_policy is not None:
    log(f"contrasts: every policy against {reference_policy} at checkpoints {checkpoints}")
    contrasts = policy_contrasts(
        table,
        reference_policy=reference_policy,
        checkpoints=checkpoints,
        progress=lambda m: log(f"contrasts: {m}"),
        **common,
    )
output = snakemake.output
tables = [
    (tests, output.tests, output.csv),
    (strip, output.strip, None),
    (bias, output.bias, output.bias_csv),
]
if contrasts is not None:
    tables.append((contrasts, output.contrasts, output.contrasts_csv))
for frame, parquet, csv in tables:
    with atomic_path(parquet) as tmp:
        frame.to_parquet(tmp, index=False, write_page_checksum=True)
    if csv is not None:
        with atomic_path(csv) as tmp:
            frame.to_csv(tmp, index=False)
dataset = snakemake.wildcards.dataset
metrics = settings["metrics"]
pages = (
    (
        tests_html(tests, title=f"Pairwise learner tests: dataset {dataset}", metrics=metrics),
        output.html,
    ),
    (
        bias_html(
            bias,
            title=f"Bias of realistic evaluation: dataset {dataset}",
            alpha=settings["alpha"],
            metrics=metrics,
        ),
        output.bias_html,
    ),
)
if contrasts is not None:
    pages += (
        (
            contrasts_html(
                contrasts,
                title=f"Policy contrasts: dataset {dataset}, every policy against {reference_policy}",
                alpha=settings["alpha"],
                metrics=metrics,
            ),
            output.contrasts_html,
        ),
    )
for page, path in pages:
    with atomic_path(path) as tmp:
        tmp.write_text(page, encoding="utf-8")
untested = [("tests", tests), ("bias", bias)] + (
    [("contrasts", contrasts)] if contrasts is not None else []
)
for name, frame in untested:  # a test with no value: a row with a note (the job goes on)
    for note, count in untested_notes(frame):
        log(f"{name}: {count} rows without a test: {note}")
significant = int(tests["significant"].sum()) if len(tests) else 0
log(
    f"{len(tests)} tests ({significant} significant), {len(strip)} strip tests, {len(bias)} bias tests"
    + (f", {len(contrasts)} contrasts" if contrasts is not None else "")
)
end_job()  # outputs written and closed: no teardown
