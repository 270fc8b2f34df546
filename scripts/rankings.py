"""Snakemake adapter of rule `rankings`: the merged tables of every dataset -> the rankings across
and within datasets, their pages and figures (delaycv.stages.rankings.rankings, with the settings
of the config's `rankings` section and what it uses of `tests` and `figures`). The log has one line
per step with the seconds elapsed since the start.
"""

import json
from pathlib import Path

from delaycv.study.job import stage_job

with stage_job(snakemake, "rankings") as job:
    from delaycv.stages.rankings import rankings
    from delaycv.stats.settings import RankingSettings

    settings = RankingSettings.from_record(json.loads(snakemake.params.settings))
    outputs = Path(snakemake.output.friedman).parent
    result = rankings(list(snakemake.input.merged), outputs, settings, progress=job.say)
    for line in [*result.notes(), result.summary()]:
        job.say(line)
