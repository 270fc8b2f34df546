"""Snakemake adapter of rule `convert`: one dataset of the config -> the canonical stream (Parquet)
(delaycv.stages.convert.convert: the embedded generator, or a raw ARFF/CSV file converted).
"""

import json

from delaycv.study.job import stage_job

with stage_job(snakemake, "convert"):
    from delaycv.stages.convert import convert

    spec = json.loads(snakemake.params.dataset)
    dataset, stream = snakemake.wildcards.dataset, snakemake.output.stream
    raw = getattr(snakemake.input, "raw", None)  # (none for a generated dataset)
    metadata = convert(spec, stream, dataset=dataset, raw=raw)
    if "generate" in spec:
        print(f"generated {metadata['rows']} instances of dataset {dataset} -> {stream}")
    else:
        print(json.dumps(metadata, indent=1, sort_keys=True, default=str))
