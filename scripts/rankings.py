"""Snakemake adapter of rule `rankings`: the merged tables of every dataset -> rankings.

Runs delaycv.stats.ranking with the config's `tests` section (metrics, references, checkpoints, alpha)
and `rankings` section (Scott-Knott ESD version) and writes, atomically: across datasets,
friedman.parquet/.csv (Friedman mean ranks, statistic, p, critical difference), nemenyi.csv (the
Nemenyi p-value of every pair), scott_knott.parquet/.csv (SK-ESD groups) and rankings.html; within
each dataset over its (seed, fold) pairs, within.parquet/.csv and within.html; and a folder of
critical-difference diagrams and SK-ESD box plots for the figures' metric and reference. The
checkpoints are those of `tests.checkpoints` (`all`: every checkpoint, each ranked on its own,
aligned across datasets by its number); a position beyond a dataset's stream leaves that dataset
out of the position's families (a line in the log), and a position answered by a later checkpoint
says so in the log. Families with fewer than 3 datasets carry a note instead of a test (on the
page and in the tables); a treatment with no value on any dataset (a policy that released no
label before the end of the stream) is not ranked, with a note in the tables, on the pages, in
its family's figures and in the log, and the job goes on. The log has one line per stage with
the seconds elapsed since the start.
"""

import json
import sys
import time

sys.stderr = sys.stdout = open(snakemake.log[0], "w", buffering=1)  # noqa: SIM115

from delaycv.common.interrupt import terminate_on_sigterm  # noqa: E402
from delaycv.study.digests import check_code, end_job, one_line_errors  # noqa: E402

terminate_on_sigterm()  # a stopped job (SIGTERM) removes its temporaries and exits with 143
check_code("rankings", snakemake.params.code)  # the code that runs is the code hashed
one_line_errors("rankings")  # an error: one line in this job's log, exit 2

import pandas as pd  # noqa: E402

from delaycv.common.atomic import atomic_dir, atomic_path  # noqa: E402
from delaycv.figures.rankings import draw_ranking_figures  # noqa: E402
from delaycv.stats.checkpoints import choose_checkpoints  # noqa: E402
from delaycv.stats.families import FAMILY, rank_across, rank_within  # noqa: E402
from delaycv.stats.paired import table_columns  # noqa: E402
from delaycv.study.report import rankings_html  # noqa: E402
from delaycv.tables.results import read_table, write_table  # noqa: E402

START = time.perf_counter()


def log(message: str) -> None:
    print(f"[{time.perf_counter() - START:6.1f} s] {message}")


settings = json.loads(snakemake.params.rankings)  # version, and what it uses of tests and figures
tests = settings["tests"]
figures = settings["figures"]
figure_metrics = [figures["metric"]] if isinstance(figures["metric"], str) else figures["metric"]
metrics = list(dict.fromkeys([*tests["metrics"], *figure_metrics]))
columns = table_columns(metrics)
pieces = []
for path in snakemake.input.merged:
    table = read_table(path, columns)
    table = table[table["reference"].isin(tests["references"])]
    chosen = choose_checkpoints(table, tests["checkpoints"])
    for row in chosen[chosen["note"] != ""].itertuples():
        what = "not ranked" if pd.isna(row.checkpoint) else "ranked there"
        log(f"checkpoints: {row.at} of dataset {row.dataset}: {row.note} ({what})")
    found = chosen.dropna(subset=["checkpoint"]).astype({"checkpoint": "int64"})
    # `all`: each checkpoint is its own position (a family never averages over checkpoints)
    every = found["at"] == "all"
    found.loc[every, "at"] = "checkpoint_" + found.loc[every, "checkpoint"].astype(str)
    pieces.append(table.merge(found[["dataset", "checkpoint", "at"]], on=["dataset", "checkpoint"]))
    log(f"read {path}: {len(table)} rows, {len(pieces[-1])} at the chosen checkpoints")
rows = pd.concat(pieces, ignore_index=True)
version = settings["version"]
log(f"across datasets: Friedman/Nemenyi and Scott-Knott ESD ({version}) of {', '.join(metrics)}")
across = rank_across(rows, metrics, version=version, alpha=tests["alpha"])
log(f"within datasets: Scott-Knott ESD ({version}) over the (seed, fold) pairs")
within = rank_within(rows, metrics, version=version)
output = snakemake.output
for frame, parquet, csv in (
    (across.friedman, output.friedman, output.friedman_csv),
    (across.nemenyi, None, output.nemenyi_csv),
    (across.scott_knott, output.scott_knott, output.scott_knott_csv),
    (within, output.within, output.within_csv),
):
    if parquet is not None:
        write_table(frame, parquet)
    with atomic_path(csv) as tmp:
        frame.to_csv(tmp, index=False)
pages = (
    (
        rankings_html(
            across.friedman,
            across.scott_knott,
            title="Rankings across datasets",
            metrics=metrics,
        ),
        output.html,
    ),
    (
        rankings_html(
            scott_knott=within, title="Scott-Knott ESD within each dataset", metrics=metrics
        ),
        output.within_html,
    ),
)
for page, path in pages:
    with atomic_path(path) as tmp:
        tmp.write_text(page, encoding="utf-8")
log("figures: critical-difference diagrams and Scott-Knott ESD box plots")
with atomic_dir(output.figures) as tmp:
    written = []
    for metric in figure_metrics:
        written += draw_ranking_figures(
            rows,
            across,
            tmp,
            metric=metric,
            reference=figures["reference"],
            formats=figures["formats"],
            dpi=figures["dpi"],
        )
families = across.friedman.groupby(list(FAMILY), sort=False)["note"]
tested = int(families.agg(lambda notes: bool((notes == "").any())).sum())
unranked = across.friedman[across.friedman["note"].str.endswith("not ranked")]
for note, count in unranked["note"].value_counts(sort=False).items():
    log(f"not ranked ({count} rows across datasets): {note}")
log(
    f"{len(across.families())} families across datasets ({tested} tested), "
    f"{len(within)} rows within datasets, {len(written)} figure files"
)
end_job()  # outputs written and closed: no teardown
