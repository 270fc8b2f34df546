"""Snakemake adapter of rule `convert`: one dataset of the config -> the canonical stream (Parquet)
(delaycv.stages.convert.convert: the embedded generator, or a raw ARFF/CSV file converted).
"""

import json
import sys

sys.stderr = sys.stdout = open(snakemake.log[0], "w", buffering=1)  # noqa: SIM115

from delaycv.common.interrupt import terminate_on_sigterm  # noqa: E402
from delaycv.study.digests import check_code, end_job, one_line_errors  # noqa: E402

terminate_on_sigterm()  # a stopped job (SIGTERM) removes its temporaries and exits with 143
check_code("convert", snakemake.params.code)  # the code that runs is the code hashed
one_line_errors("convert")  # an error: one line in this job's log, exit 2

from delaycv.stages.convert import convert  # noqa: E402

spec = json.loads(snakemake.params.dataset)
dataset = snakemake.wildcards.dataset
raw = getattr(snakemake.input, "raw", None)  # (none for a generated dataset)
metadata = convert(spec, snakemake.output.stream, dataset=dataset, raw=raw)
if "generate" in spec:
    print(
        f"generated {metadata['rows']} instances of dataset {dataset} -> {snakemake.output.stream}"
    )
else:
    print(json.dumps(metadata, indent=1, sort_keys=True, default=str))
end_job()  # outputs written and closed: no teardown
