# Stage 1: raw data (or the embedded generator) -> the canonical stream (Parquet). A dataset
# given as a canonical stream (.parquet) has no convert job: evaluate reads the file as it is.


rule convert:
    input:
        unpack(dataset_input),
    output:
        stream=STREAM,
    log:
        "logs/convert/{dataset}/{stream}.log",
    wildcard_constraints:
        dataset=_alternatives(CONVERTED),
    conda:
        "../../envs/data.yaml"
    resources:
        mem_mb=by_attempt(4000),
        runtime=by_attempt(30),
    params:
        dataset=dataset_param,
        code=CODE["convert"],
    script:
        "../../scripts/convert.py"
