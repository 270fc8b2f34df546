"""Snakemake adapter of rule `evaluate`: one (dataset, learner, seed, policy) -> a run directory
(delaycv.stages.evaluate.evaluate, with the settings of delaycv.protocol.settings.workflow_settings).
The specs come from the rule's params (canonical JSON), which are exactly what Snakemake tracks
for reruns.
"""

import json
import sys
from pathlib import Path

sys.stderr = sys.stdout = open(snakemake.log[0], "w", buffering=1)  # noqa: SIM115

from delaycv.common.interrupt import terminate_on_sigterm  # noqa: E402
from delaycv.study.digests import check_code, end_job, one_line_errors  # noqa: E402

terminate_on_sigterm()  # a stopped job (SIGTERM) removes its temporaries and exits with 143
check_code("evaluate", snakemake.params.code)  # the code that runs is the code hashed
one_line_errors(str(snakemake.wildcards))  # an error: one line in this job's log, exit 2

from delaycv.tables.usage import Meter  # noqa: E402

# the job's cost: its CPU seconds, peak memory and RAM-hours (delaycv.tables.usage; from the
# process's start: the span before this line counts at the first sample's memory)
meter = Meter()

from delaycv.protocol.settings import workflow_settings  # noqa: E402
from delaycv.stages.evaluate import evaluate  # noqa: E402

wildcards = snakemake.wildcards
settings = workflow_settings(
    json.loads(snakemake.params.options),
    learner=json.loads(snakemake.params.learner),
    policy=json.loads(snakemake.params.policy),
    seed=int(wildcards.seed),
    run_keys={
        "dataset": wildcards.dataset,
        "learner": wildcards.learner,
        "policy": wildcards.policy,
    },
    jobs=snakemake.threads,
)
run_dir = Path(snakemake.output.folds).parent
# progress: plain lines in the job log (not a terminal), every few seconds; the job's own CPU
# time (start-up, imports and writing the tables included), its wall time, peak memory and
# RAM-hours: what the job costs a cluster, in run.json
run = evaluate(snakemake.input.stream, settings, run_dir, progress=True, meter=meter)
result = run.result
if result.info["effort"].get("note"):  # a stream without an effort: no effort-aware measures
    print(f"{wildcards}: note: {result.info['effort']['note']}", file=sys.stderr)
print(f"{wildcards}: {run.rows} rows -> {run_dir}")
end_job()  # outputs written and closed: no teardown
