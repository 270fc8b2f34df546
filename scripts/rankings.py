"""Snakemake adapter of rule `rankings`: the merged tables of every dataset -> the rankings across
and within datasets, their pages and figures (delaycv.stages.rankings.rankings, with the config's
`rankings` section and what it uses of `tests` and `figures`). The log has one line per step
with the seconds elapsed since the start.
"""

import json
import sys
import time
from pathlib import Path

sys.stderr = sys.stdout = open(snakemake.log[0], "w", buffering=1)  # noqa: SIM115

from delaycv.common.interrupt import terminate_on_sigterm  # noqa: E402
from delaycv.study.digests import check_code, end_job, one_line_errors  # noqa: E402

terminate_on_sigterm()  # a stopped job (SIGTERM) removes its temporaries and exits with 143
check_code("rankings", snakemake.params.code)  # the code that runs is the code hashed
one_line_errors("rankings")  # an error: one line in this job's log, exit 2

START = time.perf_counter()


def log(message: str) -> None:
    print(f"[{time.perf_counter() - START:6.1f} s] {message}")


from delaycv.stages.rankings import rankings  # noqa: E402

settings = json.loads(snakemake.params.rankings)  # version, and what it uses of tests and figures
tests = settings["tests"]
figures = settings["figures"]
rankings(
    list(snakemake.input.merged),
    Path(snakemake.output.friedman).parent,
    metrics=tests["metrics"],
    references=tests["references"],
    checkpoints=tests["checkpoints"],
    alpha=tests["alpha"],
    version=settings["version"],
    figure_metrics=[figures["metric"]] if isinstance(figures["metric"], str) else figures["metric"],
    figure_reference=figures["reference"],
    formats=figures["formats"],
    dpi=figures["dpi"],
    progress=log,
)
end_job()  # outputs written and closed: no teardown
