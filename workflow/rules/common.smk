# Helpers shared by the rules (and only helpers: no rule is defined here).
import copy
import logging
import os
import re
import sys
from pathlib import Path

from snakemake_interface_executor_plugins.settings import DeploymentMethod

# The delaycv package the workflow runs is the one it hashes (the digests below decide reruns): the
# package beside the Snakefile in a checkout, else the installed one (a workflow used as a module).
# With conda (--sdm conda), each env holds that package: its post-deploy script
# (envs/<env>.post-deploy.sh) links the package named by DELAYCV_PACKAGE into the new env, and the
# job imports nothing else from the workflow's side. Without conda, jobs run in the environment of
# Snakemake itself, so the checkout goes first on PYTHONPATH (an installed delaycv there may be
# another copy). The rule scripts check that the package they import has the digest the workflow
# computed (delaycv.study.digests.check_code). SLURM jobs re-read this file and set both again. Nothing is
# required from the user, so there is no `envvars:` assertion.
WORKFLOW_ROOT = Path(workflow.basedir)
if (WORKFLOW_ROOT / "delaycv" / "__init__.py").is_file():
    sys.path.insert(0, str(WORKFLOW_ROOT))
    if DeploymentMethod.CONDA not in workflow.deployment_settings.deployment_method:
        _paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
        os.environ.update(
            PYTHONPATH=os.pathsep.join(
                [
                    str(WORKFLOW_ROOT),
                    *(p for p in _paths if p and p != str(WORKFLOW_ROOT)),
                ]
            )
        )

from delaycv.common import choices
from delaycv.study.datasets import datasets_with_effort, stream_file
from delaycv.study.loading import check_study_file, load_study
from delaycv.study.stage_settings import (
    compare_settings,
    figure_settings,
    ranking_settings,
)
from delaycv.study.runs import (
    RUN_KEY_LENGTH,
    canonical_json,
    dataset_spec,
    effort_scope_spec,
    estimator_spec,
    evaluation_options,
    learner_spec,
    policy_spec,
    run_key,
    runs as study_runs,
    stream_key,
    validation_spec,
)
import delaycv.study.digests as digests
from delaycv.common.errors import ConfigError
from snakemake.exceptions import WorkflowError
from snakemake.logging import logger as snakemake_logger

# Snakemake runs a rule script as `<python> <script>` with the interpreter's path unquoted
# (snakemake.script): an interpreter under a path with a space fails every job (exit 127). The
# checkout itself may be under such a path. With conda, jobs run the env's `python`.
if (
    re.search(r"\s", sys.executable)
    and DeploymentMethod.CONDA not in workflow.deployment_settings.deployment_method
):
    raise WorkflowError(
        f"the Python interpreter's path {sys.executable!r} contains a space: Snakemake writes it "
        "unquoted into the command of every rule script, so every job would fail (exit 127); "
        "run Snakemake from a virtualenv whose path has no space (make run "
        "VENV=/path/without/spaces/.venv)"
    )


def invalid_configuration(err):
    """The WorkflowError of a config's mistakes: one line each, `invalid configuration: ...`."""
    return WorkflowError(
        "\n".join(f"invalid configuration: {line}" for line in str(err).splitlines())
    )


# config.yaml is the study when no --configfile is named. delaycv reads it first: a file that is
# not YAML (its line and column), empty or not a mapping stops here, named (Snakemake's own
# reading names no file); its other mistakes (a duplicate key too) are load_study's, below. A
# --configfile is read by Snakemake before this file runs: one that is not YAML or is empty stops
# Snakemake with its own message (docs/workflow.md); load_study reads every config file again.
if not workflow.overwrite_configfiles and not workflow.modifier.skip_configfile:
    try:
        check_study_file("config.yaml")
    except ConfigError as err:
        raise invalid_configuration(err) from None

    configfile: "config.yaml"


# The study: the --configfile files (or config.yaml when none is named) with --config on top
# (delaycv reads the files again, and reads --config's text values as a file's, where the schema
# takes no text: seeds=[1,2] gives seeds 1 and 2). Every mistake stops the workflow here, before
# any job, all of them at once, one line each with the file, line, column and key: learners are
# built once, presets, mappings and metrics looked up, dataset files checked (paths relative to
# the working directory), folders, names and DELAYCV_PURE_PYTHON checked. A job that Snakemake
# spawns (a SLURM job) re-reads the Snakefile: the main process has checked files and learners.
# A warning of the config (a deprecated spelling, accepted: logger delaycv.study, one line with the
# file, line, column and key) goes to Snakemake's log, as `configuration warning: ...`.
class _ConfigWarnings(logging.Handler):
    def emit(self, record):
        snakemake_logger.warning(f"configuration warning: {record.getMessage()}")


logging.getLogger("delaycv.study").addHandler(_ConfigWarnings())
logging.getLogger("delaycv.study").propagate = False
try:
    CONFIG = load_study(
        workflow.configfiles,
        overrides=workflow.config_settings.config,
        schema=workflow.source_path("../schemas/config.schema.yaml"),
        cwd=os.getcwd() if workflow.is_main_process else None,
        learners=workflow.is_main_process,
    )
except ConfigError as err:
    raise invalid_configuration(err) from None
# A `runs` folder that the config names may be shared by studies: each run directory then ends in
# the digest of the run's settings (delaycv.study.runs.run_key), so that studies with other settings
# for the same names never share one. Without `runs`, the run directories are the study's own.
SHARED_RUNS = "runs" in config
# `config` becomes the validated study, defaults filled in (the report's captions read it), and
# what the report says of its datasets that the config alone does not say: which streams have an
# effort (a .parquet dataset's file says). The rules read CONFIG.
config.update(copy.deepcopy(CONFIG))
config["report_facts"] = (
    {"datasets_with_effort": datasets_with_effort(CONFIG, os.getcwd())}
    if workflow.is_main_process
    else {}
)

DATASETS = list(CONFIG["datasets"])
# a dataset given as a canonical stream (.parquet from `delaycv convert`) is used as it is
STREAM_FILES = {
    d: stream_file(spec) for d, spec in CONFIG["datasets"].items() if stream_file(spec)
}
CONVERTED = [d for d in DATASETS if d not in STREAM_FILES]
LEARNERS = list(CONFIG["learners"])
POLICIES = list(CONFIG["policies"])
SEEDS = [int(s) for s in CONFIG["seeds"]]
RUNS = study_runs(CONFIG)

# digests of the library code each stage runs (delaycv.stages.<stage> and what it imports)
PACKAGE_ROOT = digests.package_root(WORKFLOW_ROOT)
os.environ[digests.PACKAGE_VARIABLE] = str(PACKAGE_ROOT)
CODE = {
    stage: digests.stage_digest(stage, root=PACKAGE_ROOT)
    for stage in digests.STAGE_MODULES
}


def _alternatives(names):
    return "|".join(re.escape(str(n)) for n in names)


wildcard_constraints:
    dataset=_alternatives(DATASETS),
    learner=_alternatives(LEARNERS),
    policy=_alternatives(POLICIES),
    seed=r"\d+",
    settings=r"[0-9a-f]{%d}" % RUN_KEY_LENGTH,
    stream=r"[0-9a-f]{%d}" % RUN_KEY_LENGTH,


# The study's tables and figures go under `results` (default results/), the run directories under
# `runs` (default <results>/runs): two studies with their own `results` may share `runs`.
RESULTS = CONFIG["results"]
# a converted stream, keyed by its dataset's spec (delaycv.study.runs.stream_key): two studies that
# give one dataset name two sources never write one file, two with the same spec share it
STREAM = "resources/generated/streams/{dataset}/{stream}.parquet"
STREAM_KEYS = {d: stream_key(CONFIG, d) for d in CONVERTED}
RUNS_FOLDER = CONFIG["runs"]
RUN_DIR = f"{RUNS_FOLDER}/{{dataset}}/{{learner}}/seed{{seed}}/{{policy}}"
# in a shared `runs` folder: the settings key of each (dataset, learner, policy), the last folder
# of its run directories (docs/workflow.md, "Rules and files")
RUN_KEYS = {}
if SHARED_RUNS:
    RUN_KEYS = {
        (d, lr, p): run_key(CONFIG, d, lr, p)
        for d in DATASETS
        for lr in LEARNERS
        for p in POLICIES
    }
    RUN_DIR = f"{RUN_DIR}/{{settings}}"
MERGED = f"{RESULTS}/merged/{{dataset}}.parquet"
MERGED_ALL = f"{RESULTS}/merged.parquet"
# the study's runs: one row per run (delaycv.tables.costs), its CSV and its page in the report
RUNS_TABLE = f"{RESULTS}/runs.parquet"
RUNS_TABLE_CSV = f"{RESULTS}/runs.csv"
RUNS_TABLE_HTML = f"{RESULTS}/runs.html"
DATASETS_TABLE_CSV = f"{RESULTS}/datasets.csv"
DATASETS_TABLE_HTML = f"{RESULTS}/datasets.html"
TESTS_DIR = f"{RESULTS}/tests/{{dataset}}"
FIGURES_DIR = f"{RESULTS}/figures/{{dataset}}"
RANKINGS_DIR = f"{RESULTS}/rankings"
# Logs: under logs/, then the folder the job writes into, so that two studies (or two `runs`
# folders) never write one log: logs/<results>/<rule>/... for the jobs of the study (merge, tests,
# figures, rankings), logs/<runs>/... for the evaluations (a run shared by two studies has one log,
# as it has one run directory); the evaluations' Snakemake benchmarks go beside the study's tables.
STUDY_LOGS = f"logs/{RESULTS}"
RUN_LOG = f"logs/{RUN_DIR}.log"
# (in a shared `runs` folder: .../{policy}/{settings}.tsv, as the run directory)
RUN_BENCHMARK = f"{RESULTS}/benchmarks/evaluate/{RUN_DIR[len(RUNS_FOLDER) + 1:]}.tsv"


def dataset_param(wildcards):
    return canonical_json(dataset_spec(CONFIG, wildcards.dataset))


def stream_path(dataset):
    """The dataset's stream file: the user's canonical stream, else the one `convert` writes."""
    return STREAM_FILES.get(dataset) or STREAM.format(
        dataset=dataset, stream=STREAM_KEYS[dataset]
    )


def stream_input(wildcards):
    """The dataset's stream: the user's canonical stream file, else the one `convert` writes.
    A run directory of a shared `runs` folder must carry this study's settings key."""
    if SHARED_RUNS:
        key = RUN_KEYS[(wildcards.dataset, wildcards.learner, wildcards.policy)]
        if wildcards.settings != key:
            raise WorkflowError(
                f"the run directory's settings key {wildcards.settings} is not this study's "
                f"settings for {wildcards.dataset}/{wildcards.learner}/{wildcards.policy} "
                f"({key}): it belongs to a study with other settings"
            )
    return stream_path(wildcards.dataset)


def dataset_input(wildcards):
    """The raw file of a converted dataset (none for a generated one). The stream's key must be
    this study's for the dataset."""
    key = STREAM_KEYS[wildcards.dataset]
    if wildcards.stream != key:
        raise WorkflowError(
            f"the stream's key {wildcards.stream} is not this study's spec of dataset "
            f"{wildcards.dataset} ({key}): it belongs to a study with another source"
        )
    spec = CONFIG["datasets"][wildcards.dataset]
    return {"raw": spec["path"]} if "path" in spec else {}


def learner_param(wildcards):
    return canonical_json(learner_spec(CONFIG, wildcards.learner))


# the digest of each learner's own classes' modules (module:Class; "" for river's and MOA's), a
# param of its evaluate jobs: a change of such a module reruns them (delaycv.study.digests)
LEARNER_CODE = {l: digests.learner_code(learner_spec(CONFIG, l)) for l in LEARNERS}


def learner_code_param(wildcards):
    return LEARNER_CODE[wildcards.learner]


def policy_param(wildcards):
    return canonical_json(policy_spec(CONFIG, wildcards.policy))


EVALUATION_OPTIONS = canonical_json(
    {
        "validation": validation_spec(CONFIG),
        "estimator": estimator_spec(CONFIG),
        "effort_scope": effort_scope_spec(CONFIG),
        "options": evaluation_options(CONFIG),
    }
)
# The settings of the compare, rankings and figures stages (delaycv.study.stage_settings: each
# reads what its stage uses, and only that, so that a change of tests.resamples does not rerun
# the rankings), checked by their makers, as canonical JSON params of their rules (their records)
COMPARE = compare_settings(CONFIG)
RANKINGS = ranking_settings(CONFIG)
FIGURES = figure_settings(CONFIG)
COMPARE_SETTINGS = canonical_json(COMPARE.record())
RANKING_SETTINGS = canonical_json(RANKINGS.record())
FIGURE_SETTINGS = canonical_json(FIGURES.record())
POLICY_SPECS = canonical_json({p: policy_spec(CONFIG, p) for p in POLICIES})
# the reference policy of the policy contrasts (None: no contrasts)
CONTRAST_REFERENCE = COMPARE.reference_policy


# The report's labels. Snakemake's report lists the results of a (sub)category one row each, a
# column per label, and makes a toggle of a label (one at most) that has exactly two values, each on
# half of the results, other than the first: a row then needs a result for each of the two values,
# or the page goes blank when the row is drawn (TypeError ... 'mime_type'). So every result has two
# labels: what it is first (a figure's kind and name, a table's name and dataset), its format last.
# Only the format can then be a toggle, and every figure has each format of `figures.formats`,
# every table of a toggle its page and its CSV. The toggle starts on the value that sorts first:
# these words put the PNG and the HTML page first.
FORMAT_LABELS = {
    "png": "PNG",
    "pdf": "zoomable PDF",
    "svg": "SVG",
    "html": "HTML",
    "csv": "download CSV",
}


def table_labels(table, format, dataset=None):
    """The report's labels of a table's file: the table (and its dataset), then its format."""
    return {
        "table": f"{table} ({dataset})" if dataset else table,
        "format": FORMAT_LABELS[format],
    }


# The figures of delaycv.figures.figure_set.draw_figures, by the first part of their file names, as
# the report names them; FIGURE_PATTERN picks each figure file of a figures folder with its kind and
# format as wildcards: every figure enters the report once per format, its PNG (drawn to be read at
# the report's width) and its PDF (shown in the report's PDF viewer, which zooms: the way to
# enlarge it there), one row with a PNG/PDF toggle.
FIGURE_KINDS = {
    "learning_curves": "learning curves",
    "bias": "bias over the stream",
    "final": "final distributions",
    "pairwise": "pairwise tests",
    "sensitivity": "sensitivity to the waiting time",
    "contrasts": "difference to the reference policy",
}
# (every format a figure may have: delaycv.common.choices.FIGURE_FORMATS)
FIGURE_FORMATS = "{format,%s}" % "|".join(choices.FIGURE_FORMATS)
FIGURE_PATTERN = "{figure,%s}_{name}.%s" % ("|".join(FIGURE_KINDS), FIGURE_FORMATS)


# The figures of delaycv.figures.rankings: critical-difference diagrams and SK-ESD box plots, each
# kind a subcategory of the report's Rankings (the tables are the subcategory `tables`).
RANKING_FIGURE_KINDS = {
    "cd": "critical-difference diagram",
    "sk": "Scott-Knott ESD groups",
}
RANKING_FIGURE_PATTERN = "{figure,%s}_{name}.%s" % (
    "|".join(RANKING_FIGURE_KINDS),
    FIGURE_FORMATS,
)


def ranking_figure_kind(wildcards):
    """The report's subcategory of one ranking figure file: its kind."""
    return RANKING_FIGURE_KINDS[wildcards.figure]


def ranking_figure_labels(wildcards):
    """The report's labels of one ranking figure file: the figure, then its format."""
    return {
        "figure": f"{RANKING_FIGURE_KINDS[wildcards.figure]} ({wildcards.name})",
        "format": FORMAT_LABELS[wildcards.format],
    }


def figure_labels(wildcards):
    """The report's labels of one figure file: the figure (its kind and the rest of its file's
    name, the same for its PNG and its PDF), then its format."""
    return {
        "figure": f"{FIGURE_KINDS[wildcards.figure]} ({wildcards.name})",
        "format": FORMAT_LABELS[wildcards.format],
    }


def run_files(dataset, name):
    """One file of every run directory of a dataset, in config order."""
    return [
        f"{RUN_DIR}/{name}".format(
            dataset=r.dataset,
            learner=r.learner,
            seed=r.seed,
            policy=r.policy,
            settings=RUN_KEYS.get((r.dataset, r.learner, r.policy)),
        )
        for r in RUNS
        if r.dataset == dataset
    ]


def study_run_files(name):
    """One file of every run directory of the study, in config order."""
    return [file for dataset in DATASETS for file in run_files(dataset, name)]


def say_run_warnings():
    """When the workflow ends well: the warnings of the study's runs (in their jobs' logs and
    run.json files; delaycv.tables.costs.warnings_summary)."""
    import pandas as pd

    from delaycv.tables.costs import WARNINGS_COLUMN, warnings_summary

    try:  # (none, or an empty file of --touch: nothing to say)
        table = pd.read_parquet(RUNS_TABLE)
    except (OSError, ValueError):
        return
    if WARNINGS_COLUMN not in table:  # (written before the column was)
        return
    where = f"{RUNS_TABLE_HTML} (the report's Runs page) and {RUNS_TABLE_CSV} list them"
    for line in warnings_summary(table, where):
        snakemake_logger.warning(line)


def say_conversion_notes():
    """When the workflow ends well: what the conversion of each of the study's streams left out
    or changed, one line per stream that has any: the table of datasets' notes (merge_all's,
    delaycv.tables.datasets; each conversion's log has the rows)."""
    import pandas as pd

    try:  # (none, or an empty file of --touch: nothing to say)
        table = pd.read_csv(DATASETS_TABLE_CSV, keep_default_na=False)
    except (OSError, ValueError):
        return
    if "notes" not in table:
        return
    noted = table[table["notes"] != ""]
    if noted.empty:
        return
    snakemake_logger.warning(
        f"delaycv: the conversion of {len(noted)} of {len(table)} datasets left out or "
        "changed something (each conversion's log, logs/convert/<dataset>/, names the rows):"
    )
    for dataset, notes in zip(noted["dataset"], noted["notes"], strict=True):
        snakemake_logger.warning(f"  {dataset}: {notes}")


def contrast_outputs():
    """The compare rule's contrast tables, when the config has a reference policy."""
    if CONTRAST_REFERENCE is None:
        return {}
    where = {
        "category": "Policy contrasts",
        "subcategory": "{dataset}",
        "caption": "../report/contrasts.rst",
    }
    return {
        "contrasts": f"{TESTS_DIR}/contrasts.parquet",
        "contrasts_html": report(
            f"{TESTS_DIR}/contrasts.html",
            labels=table_labels("policy contrasts", "html", "{dataset}"),
            **where,
        ),
        "contrasts_csv": report(
            f"{TESTS_DIR}/contrasts.csv",
            labels=table_labels("policy contrasts", "csv", "{dataset}"),
            **where,
        ),
    }


def figure_inputs(wildcards):
    """The figures rule's inputs: the merged table, the strip and (with contrasts) the contrasts."""
    inputs = {
        "merged": MERGED.format(dataset=wildcards.dataset),
        "strip": f"{TESTS_DIR}/strip.parquet".format(dataset=wildcards.dataset),
    }
    if CONTRAST_REFERENCE is not None:
        inputs["contrasts"] = f"{TESTS_DIR}/contrasts.parquet".format(
            dataset=wildcards.dataset
        )
    return inputs


def final_outputs():
    return [
        MERGED_ALL,
        *expand(f"{TESTS_DIR}/tests.csv", dataset=DATASETS),
        *(
            expand(f"{TESTS_DIR}/contrasts.csv", dataset=DATASETS)
            if CONTRAST_REFERENCE is not None
            else []
        ),
        *expand(FIGURES_DIR, dataset=DATASETS),
        f"{RANKINGS_DIR}/rankings.html",
    ]


def by_attempt(base):
    """A resource that grows with the attempt: base, then 2 x base, 3 x base on the retries.

    A job killed for its memory or time limit (SLURM) is retried with more (`retries:` of the
    profile). A profile's `set-resources` value replaces this function: it must scale itself, e.g.
    `mem_mb: "8000 * attempt"` (docs/workflow.md).
    """

    def resource(wildcards, attempt):
        return base * attempt

    return resource
