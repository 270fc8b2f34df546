"""Snakemake adapter of rule `evaluate`: one (dataset, learner, seed, policy) -> a run directory.

Reads the canonical stream chunk by chunk, evaluates the learner's k folds under the policy
(delaycv.engine) and writes the run directory (delaycv.tables.run_writer.RunWriter) as the run goes: the
fold table and its summary piece by piece, then run.json. The specs come from the rule's params
(canonical JSON), which are exactly what Snakemake tracks for reruns.
"""

import json
import sys
from pathlib import Path

sys.stderr = sys.stdout = open(snakemake.log[0], "w", buffering=1)  # noqa: SIM115

from delaycv.common.interrupt import terminate_on_sigterm  # noqa: E402
from delaycv.study.digests import check_code, end_job, one_line_errors  # noqa: E402

terminate_on_sigterm()  # a stopped job (SIGTERM) removes its temporaries and exits with 143

check_code("evaluate", snakemake.params.code)  # the code that runs is the code hashed
one_line_errors(str(snakemake.wildcards))  # a failed run: one line in the log, exit 2

from delaycv.tables.usage import Meter  # noqa: E402

# the job's cost: its CPU seconds, peak memory and RAM-hours (delaycv.tables.usage; from the process's
# start: the span before this line counts at the first sample's memory)
meter = Meter()

from delaycv.data.stream import open_stream  # noqa: E402
from delaycv.engine import evaluate  # noqa: E402
from delaycv.protocol.settings import workflow_settings  # noqa: E402
from delaycv.tables.run_writer import RunWriter  # noqa: E402

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
with RunWriter(run_dir) as run:
    result = evaluate(
        open_stream(snakemake.input.stream),  # read chunk by chunk as the run goes
        settings,
        progress=True,  # plain lines in the job log (not a terminal), every few seconds
        on_rows=run.add,  # the fold table is written as it comes, not held
    )
    run.write_tables(result)
    # the job's own CPU time (start-up, imports and writing the tables included; the engine's
    # cpu_seconds counts the evaluation only), its wall time, peak memory and RAM-hours: what the
    # job costs a cluster, what bench_study sums and the study's runs table lists
    run.finish(result, extra=meter.stop())
if result.info["effort"].get("note"):  # a stream without an effort: no effort-aware measures
    print(f"{wildcards}: note: {result.info['effort']['note']}", file=sys.stderr)
print(f"{wildcards}: {run.rows} rows -> {run_dir}")
end_job()  # outputs written and closed: no teardown
