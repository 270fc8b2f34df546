"""Snakemake adapter of rule `figures`: merged table + tests -> a folder of figures (PNG and PDF)
(delaycv.stages.figures.figures, with the settings of the config's `figures` section, the tested
metrics and `tests.alpha`, and the policies' specs). Warnings of delaycv.figures (a policy the
sensitivity figure cannot place, a dataset with no sensitivity figure) go to the job's log.
"""

import json

from delaycv.study.job import stage_job

with stage_job(snakemake, "figures"):
    from delaycv.figures.settings import FigureSettings
    from delaycv.stages.figures import figures

    written = figures(
        snakemake.input.merged,
        snakemake.output.figures,
        FigureSettings.from_record(json.loads(snakemake.params.settings)),
        tests=snakemake.input.strip,
        contrasts=getattr(snakemake.input, "contrasts", None),  # when the study has contrasts
        policy_specs=json.loads(snakemake.params.policies),  # the specs the runs used: the windows
        jobs=snakemake.threads,
    )
    print(f"{len(written)} files -> {snakemake.output.figures}")
