"""Snakemake adapter of rule `figures`: merged table + tests -> a folder of figures (PNG and PDF).

The significance strip under the learning curves uses the tests at every checkpoint (strip.parquet);
with policy contrasts (contrasts.parquet) the figure of the difference to the reference policy.
The sensitivity and contrast figures take each policy's windows from its spec in the config (names
are labels).
Warnings of delaycv.figures.figure_set (a policy the sensitivity figure cannot place, a dataset with no
sensitivity figure) go to the job's log.
"""

import json
import logging
import sys

sys.stderr = sys.stdout = open(snakemake.log[0], "w", buffering=1)  # noqa: SIM115
logging.basicConfig(stream=sys.stdout, level=logging.WARNING, format="%(levelname)s: %(message)s")

from delaycv.common.interrupt import terminate_on_sigterm  # noqa: E402
from delaycv.study.digests import check_code, end_job, one_line_errors  # noqa: E402

terminate_on_sigterm()  # a stopped job (SIGTERM) removes its temporaries and exits with 143

check_code("plots", snakemake.params.code)  # the code that runs is the code hashed
one_line_errors("figures")  # an error: one line in this job's log, exit 2

from delaycv.common.atomic import atomic_dir  # noqa: E402
from delaycv.figures.contrasts import draw_contrast_figures  # noqa: E402
from delaycv.figures.figure_set import draw_figures  # noqa: E402
from delaycv.stats.paired import table_columns  # noqa: E402
from delaycv.tables.results import read_table  # noqa: E402

settings = json.loads(snakemake.params.figures)
alpha = json.loads(snakemake.params.tests)["alpha"]
policies = json.loads(snakemake.params.policies)  # the specs the runs used: the figures' windows
metric = settings.pop("metric")  # one metric or a list: a set of figures each
metrics = [metric] if isinstance(metric, str) else metric
table = read_table(snakemake.input.merged, table_columns(metrics))
strip = read_table(snakemake.input.strip)
contrasts = getattr(snakemake.input, "contrasts", None)  # an input when the study has them
contrasts = read_table(contrasts) if contrasts is not None else None
with atomic_dir(snakemake.output.figures) as tmp:
    written = []
    for metric in metrics:
        written += draw_figures(
            table, strip, tmp, alpha=alpha, policy_specs=policies, metric=metric, **settings
        )
        if contrasts is not None:
            written += draw_contrast_figures(
                contrasts,
                tmp,
                metric=metric,
                formats=settings["formats"],
                dpi=settings["dpi"],
                specs=policies,
            )
print(f"{len(written)} files -> {snakemake.output.figures}")
end_job()  # outputs written and closed: no teardown
