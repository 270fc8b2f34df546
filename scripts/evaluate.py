"""Snakemake adapter of rule `evaluate`: one (dataset, learner, seed, policy) -> a run directory
(delaycv.stages.evaluate.evaluate, with the settings of delaycv.protocol.settings.workflow_settings).
The specs come from the rule's params (canonical JSON), which are exactly what Snakemake tracks
for reruns. run.json gets what the job cost a cluster: its CPU and wall time from the process's
start, its peak memory and RAM-hours (delaycv.tables.usage.Meter).
"""

import json
import sys
from pathlib import Path

from delaycv.study.job import stage_job

wildcards, params = snakemake.wildcards, snakemake.params
with stage_job(snakemake, "evaluate", label=str(wildcards)):
    from delaycv.tables.usage import Meter

    meter = Meter()  # (the span before this line counts at the first sample's memory)

    from delaycv.protocol.settings import workflow_settings
    from delaycv.stages.evaluate import evaluate, use_system_allocator

    use_system_allocator()  # before the stream's first buffer

    settings = workflow_settings(
        json.loads(params.options),
        learner=json.loads(params.learner),
        policy=json.loads(params.policy),
        seed=int(wildcards.seed),
        run_keys={key: getattr(wildcards, key) for key in ("dataset", "learner", "policy")},
        jobs=snakemake.threads,
    )
    run_dir = Path(snakemake.output.folds).parent
    # progress: plain lines in the job's log (not a terminal), every few seconds
    run = evaluate(snakemake.input.stream, settings, run_dir, progress=True, meter=meter)
    note = run.result.info["effort"].get("note")
    if note:  # a stream without an effort: no effort-aware measures
        print(f"{wildcards}: note: {note}", file=sys.stderr)
    print(run.summary())
