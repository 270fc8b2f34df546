"""Snakemake adapter of rule `convert`: one dataset of the config -> the canonical stream (Parquet).

A dataset is either generated (the embedded default stream, delaycv.data.synthetic) or converted from a
raw ARFF/CSV file (delaycv.data.convert). The output is written atomically by the library.
"""

import json
import sys

sys.stderr = sys.stdout = open(snakemake.log[0], "w", buffering=1)  # noqa: SIM115

from delaycv.common.interrupt import terminate_on_sigterm  # noqa: E402
from delaycv.study.digests import check_code, end_job, one_line_errors  # noqa: E402

terminate_on_sigterm()  # a stopped job (SIGTERM) removes its temporaries and exits with 143

check_code("convert", snakemake.params.code)  # the code that runs is the code hashed
one_line_errors("convert")  # an error: one line in this job's log, exit 2

spec = json.loads(snakemake.params.dataset)
dataset = snakemake.wildcards.dataset
dest = snakemake.output.stream

if "generate" in spec:
    from delaycv.data.stream import write_stream
    from delaycv.data.synthetic import generate_stream

    # effort: la + ld, or none when the config says effort: null (the only value it allows here)
    stream = generate_stream(
        **{"dataset": dataset, "effort": "effort" not in spec, **spec["generate"]}
    )
    write_stream(stream, dest)
    print(f"generated {len(stream)} instances of dataset {dataset} -> {dest}")
else:
    from delaycv.data.convert import convert_file

    options = {
        k: spec[k]
        for k in (
            "preset",
            "mapping",
            "drop_truncated_last_line",
            "sort",
            "format",
            "inf",
            "effort",
        )
        if k in spec
    }
    metadata = convert_file(snakemake.input.raw, dest, dataset=dataset, **options)
    print(json.dumps(metadata, indent=1, sort_keys=True, default=str))
end_job()  # outputs written and closed: no teardown
