"""Snakemake adapter of rule `figures`: merged table + tests -> a folder of figures (PNG and PDF)
(delaycv.stages.figures.figures, with the config's `figures` section, `tests.alpha` and the
policies' specs). Warnings of delaycv.figures (a policy the sensitivity figure cannot place, a
dataset with no sensitivity figure) go to the job's log.
"""

import json
import logging
import sys

sys.stderr = sys.stdout = open(snakemake.log[0], "w", buffering=1)  # noqa: SIM115
logging.basicConfig(stream=sys.stdout, level=logging.WARNING, format="%(levelname)s: %(message)s")

from delaycv.common.interrupt import terminate_on_sigterm  # noqa: E402
from delaycv.study.digests import check_code, end_job, one_line_errors  # noqa: E402

terminate_on_sigterm()  # a stopped job (SIGTERM) removes its temporaries and exits with 143
check_code("figures", snakemake.params.code)  # the code that runs is the code hashed
one_line_errors("figures")  # an error: one line in this job's log, exit 2

from delaycv.stages.figures import figures  # noqa: E402

settings = json.loads(snakemake.params.figures)
written = figures(
    snakemake.input.merged,
    snakemake.output.figures,
    tests=snakemake.input.strip,
    contrasts=getattr(snakemake.input, "contrasts", None),  # an input when the study has them
    metrics=settings.pop("metric"),  # one metric or a list: a set of figures each
    alpha=json.loads(snakemake.params.tests)["alpha"],
    policy_specs=json.loads(snakemake.params.policies),  # the specs the runs used: the windows
    **settings,
)
print(f"{len(written)} files -> {snakemake.output.figures}")
end_job()  # outputs written and closed: no teardown
