"""Snakemake adapter of rule `compare`: a merged table -> the learner tests, the bias tests and
(with a reference policy) the policy contrasts, with their pages (delaycv.stages.compare.compare,
with the settings of the config's `tests` and `contrasts` sections). The log has one line per step
with the seconds elapsed since the start.
"""

import json
from pathlib import Path

from delaycv.study.job import stage_job

with stage_job(snakemake, "compare") as job:
    from delaycv.stages.compare import compare
    from delaycv.stats.settings import CompareSettings

    settings = CompareSettings.from_record(json.loads(snakemake.params.settings))
    outputs = Path(snakemake.output.tests).parent
    dataset = snakemake.wildcards.dataset
    result = compare(snakemake.input.merged, outputs, settings, dataset=dataset, progress=job.say)
    for line in [*result.notes(), result.summary()]:
        job.say(line)
