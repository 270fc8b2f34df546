# delaycv: evaluate online binary classifiers with delayed labels (prequential k-fold).
#   snakemake --cores 2 --profile profiles/default                  # the whole pipeline
#   snakemake --cores 2 --profile profiles/default --report results/report.html
# docs/workflow.md describes the config, the rules, reruns, environments and the SLURM profile.
from snakemake.utils import min_version

min_version("9.0")


# The config the user names (--configfile) is the whole study; config.yaml is the study only when
# no config file is named (common.smk reads it, and delaycv.study.loading.load_study validates the study).
report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/merge.smk"
include: "workflow/rules/compare.smk"
include: "workflow/rules/rankings.smk"
include: "workflow/rules/figures.smk"


localrules:
    all,
    merge,
    merge_all,


# the conversions' notes and the runs' warnings are in their jobs' logs: say them once the
# study has run
onsuccess:
    say_conversion_notes()
    say_run_warnings()


rule all:
    default_target: True
    input:
        final_outputs(),
