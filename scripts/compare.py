"""Snakemake adapter of rule `compare`: a merged table -> the learner tests, the bias tests and
(with a reference policy) the policy contrasts, with their pages (delaycv.stages.compare.compare,
with the config's `tests` and `contrasts` sections). The log has one line per step with the
seconds elapsed since the start.
"""

import json
import sys
import time
from pathlib import Path

sys.stderr = sys.stdout = open(snakemake.log[0], "w", buffering=1)  # noqa: SIM115

from delaycv.common.interrupt import terminate_on_sigterm  # noqa: E402
from delaycv.study.digests import check_code, end_job, one_line_errors  # noqa: E402

terminate_on_sigterm()  # a stopped job (SIGTERM) removes its temporaries and exits with 143
check_code("compare", snakemake.params.code)  # the code that runs is the code hashed
one_line_errors("compare")  # an error: one line in this job's log, exit 2

START = time.perf_counter()


def log(message: str) -> None:
    print(f"[{time.perf_counter() - START:6.1f} s] {message}")


from delaycv.stages.compare import compare  # noqa: E402

tests = json.loads(snakemake.params.tests)
compare(
    snakemake.input.merged,
    Path(snakemake.output.tests).parent,
    metrics=tests["metrics"],
    references=tests["references"],
    checkpoints=tests["checkpoints"],
    resamples=tests["resamples"],
    alpha=tests["alpha"],
    seed=tests["seed"],
    reference_policy=json.loads(snakemake.params.contrasts)["reference"],
    bias=True,
    dataset=snakemake.wildcards.dataset,
    progress=log,
)
end_job()  # outputs written and closed: no teardown
