"""The corrected reference checked against the truth on the HITL study and the spdisc files: the
tables of docs/corrected.md, from the workflow's outputs and the streams.

Run the replication configs first (RQ1 with river's HoeffdingTree and MOA's, RQ3, the spdisc
study; they share their run directories and evaluate every checkpoint against ``observed``,
``true`` and ``corrected``); the tables of the studies that have not run are skipped, each named:

    snakemake --cores 2 --profile profiles/default --configfile config/hitl-rq1.yaml
    snakemake --cores 2 --profile profiles/default --configfile config/hitl-rq1-moa.yaml
    snakemake --cores 2 --profile profiles/default --configfile config/hitl-rq3.yaml
    snakemake --cores 2 --profile profiles/default --configfile config/spdisc-verification.yaml
    python benchmarks/corrected_validation.py [--out results/corrected] [--doc docs/corrected.md]

Reads each study's merged fold tables (``<results>/merged/<dataset>.parquet``) and prints, as
Markdown, for G-mean, recall_1 and FPR_1 at the study's key commits (1,000 ... 5,000) of every
HITL policy, fold and project:

* ``error``: the median |observed - true| and |corrected - true| per policy family (the waiting
  time N of the predicted negatives) and pooled, the share of the observed error the correction
  removes (1 - median |corrected - true| / median |observed - true|; blank where the observed
  median rounds to 0.000), the share of cells where
  the correction is further from the truth than the observed estimate, and the mean signed
  errors;
* ``coverage``: how often the 95 % interval over the folds of the corrected values
  (mean -/+ t sd / sqrt(k), the runs' summary) holds the mean over the folds of the true values;
* ``by_window``: the median errors by the inspection time P;
* ``by_project``: the median errors per project (where the correction falls short);
* ``assumptions``: per project, what the replay knows and a practitioner does not: the share of
  defects a fix reveals within 90 days among the defects a learner predicted positive and among
  those it predicted negative (the correction assumes they are equal), and the same share in the
  first and the second half of the stream (it assumes the delays do not drift).

Under automatic labelling (both windows clean: the ``verification`` preset) the correction can
only add the fixes still to come. Two more tables, from two more studies where they have run:

* ``verification``: the same errors for the ``verification`` policies (W = 1d ... 90d) of the RQ3
  config (``config/hitl-rq3.yaml``, river's HoeffdingTree) at the key commits, by W and pooled,
  with the share of cells where the corrected estimate lies between the observed one and the
  truth (``between (%)``);
* ``maturity``: the spdisc files (``config/spdisc-verification.yaml``: verification 90d, the
  setting of Cabral et al.), at every checkpoint, by how many years before the end of its file
  the checkpoint lies, with the defect rate of the commits of those years: the files' last
  years are not fully labelled yet, and there the truth, not the estimate, is short.

``--simulated N`` adds ``simulated``: synthetic streams whose assumptions hold
(:mod:`delaycv.data.synthetic`, stationary log-normal fix delays, 80 % of the defects ever
fixed), naive Bayes, hitl 7d/60d with declared inspection error rates 0, 0.1, 0.2 and 0.3,
bootstrap 2 folds, N seeds: per rate and metric the mean error of observed and of corrected
against true at the last checkpoint, the standard error of corrected's over the seeds, and that
error in standard errors (the test ``test_unbiased_on_streams_whose_fix_delays_are_stationary``
asks the same of 24 seeds). It needs no study: ``--simulated 48 --doc docs/corrected.md`` alone
writes that block (about 4 minutes of CPU, the seeds in parallel over the machine's cores).

``--doc`` writes each table into the doc's marked block (``<!-- corrected: NAME -->`` ...
``<!-- /corrected: NAME -->``), so that the doc's tables are the numbers' own; ``--out`` keeps
the cells as CSV.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import math
import os
import re
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import stdtrit

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from delaycv.stats.checkpoints import at_checkpoints, choose_checkpoints  # noqa: E402
from delaycv.tables.results import read_table  # noqa: E402
from tests.support.simulated_bias import simulated_errors  # noqa: E402

STUDIES = {
    "river HoeffdingTree": REPO / "results" / "hitl-rq1",
    "MOA HoeffdingTree": REPO / "results" / "hitl-rq1-moa",
}
#: the studies of automatic labelling at the key commits (the ``verification`` table)
VERIFICATION = {"river HoeffdingTree": REPO / "results" / "hitl-rq3"}
#: the study of the spdisc files under verification 90d (the ``maturity`` table)
MATURITY = REPO / "results" / "spdisc-verification"
METRICS = ("gmean", "recall_1", "fpr_1")
KEY_COMMITS = (1000, 2000, 3000, 4000, 5000)
SHARED = REPO.parent / "shared" / "datasets"
CUT2YEARS = SHARED / "commit_guru_dataset" / "cut2years"
SPDISC = SHARED / "spdisc-icse19-master" / "datasets"
YEAR = 365 * 86400
#: the bands of years before the end of a file (the ``maturity`` table)
YEARS_BEFORE_END = (0, 1, 2, 3, np.inf)


def read_merged(root: Path, *columns: str) -> pd.DataFrame:
    """The study's merged fold tables (the run keys, ``reference``, ``checkpoint``, ``columns``
    and the metrics)."""
    paths = sorted((root / "merged").glob("*.parquet"))
    if not paths:
        raise FileNotFoundError(f"no merged tables under {root}/merged/ (run the config first)")
    keep = ["dataset", "learner", "seed", "policy", "fold", "reference", "checkpoint"]
    keep += [*columns, *METRICS]
    return pd.concat([read_table(p)[keep] for p in paths], ignore_index=True)


def read_study(root: Path) -> pd.DataFrame:
    """The study's merged fold tables at the key commits (each the first checkpoint at or after
    it, as the study's tests and contrasts read them:
    :func:`delaycv.stats.checkpoints.choose_checkpoints`)."""
    frame = read_merged(root)
    chosen = choose_checkpoints(frame, {"positions": list(KEY_COMMITS)})
    return at_checkpoints(frame, chosen)


def _wide(frame: pd.DataFrame, study: str, keys: list[str]) -> pd.DataFrame:
    """One row per (``keys``, metric): observed, true, corrected and the two absolute errors."""
    long = frame.melt(id_vars=[*keys, "reference"], value_vars=list(METRICS), var_name="metric")
    # the cells there are, NaN values kept (a pivot table without dropna adds every combination
    # of the keys: the checkpoints of one dataset under another)
    wide = long.set_index([*keys, "metric", "reference"])["value"].unstack("reference")
    wide = wide.reset_index()
    wide.columns.name = None
    wide["study"] = study
    wide["err_observed"] = (wide["observed"] - wide["true"]).abs()
    wide["err_corrected"] = (wide["corrected"] - wide["true"]).abs()
    return wide


RUN_CELL = ["dataset", "learner", "seed", "policy", "fold", "checkpoint"]


def cells(frame: pd.DataFrame, study: str) -> pd.DataFrame:
    """One row per (run, fold, checkpoint, metric) of a HITL policy: observed, true, corrected."""
    wide = _wide(frame[frame["policy"].str.startswith("hitl_")], study, RUN_CELL)
    windows = wide["policy"].str.extract(r"hitl_(?P<P>[^_]+)_(?P<N>[^_]+)")
    wide["family"] = "hitl, N = " + windows["N"]
    wide["P"] = windows["P"]
    return wide


def verification_cells(frame: pd.DataFrame, study: str) -> pd.DataFrame:
    """One row per (run, fold, checkpoint, metric) of a ``verification`` policy, with its W."""
    wide = _wide(frame[frame["policy"].str.startswith("verification_")], study, RUN_CELL)
    wide["W"] = wide["policy"].str.removeprefix("verification_")
    return wide


def between_share(data: pd.DataFrame, by: list[str]) -> pd.Series:
    """The share (%) of cells whose corrected value lies between the observed one and the truth
    (both included)."""
    ok = data.dropna(subset=["observed", "true", "corrected"])
    inside = (ok["corrected"] - ok["observed"]) * (ok["corrected"] - ok["true"]) <= 0
    return (100 * inside.groupby([ok[k] for k in by], sort=False).mean()).rename("between (%)")


def verification_table(data: pd.DataFrame) -> pd.DataFrame:
    """The ``verification`` table: the errors by study, metric and W, then pooled over W."""
    pooled = data.assign(W="pooled")
    days = {w: pd.Timedelta(w.upper()) for w in data["W"].unique()}  # 7d -> 7 days
    order = {w: i for i, w in enumerate(sorted(days, key=days.get))}
    order["pooled"] = len(order)
    parts = []
    for part in (data, pooled):
        table = error_table(part, ["study", "metric", "W"])
        between = between_share(part, ["study", "metric", "W"]).reset_index()
        parts.append(table.merge(between, on=["study", "metric", "W"]))
    out = pd.concat(parts, ignore_index=True)
    out = out.assign(_w=out["W"].map(order)).sort_values(["study", "metric", "_w"], kind="stable")
    return out.drop(columns="_w")


def maturity_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """The cells of the spdisc study's ``verification_90d`` runs at every checkpoint, with the
    band of years between the checkpoint and the end of its file."""
    frame = frame[frame["policy"] == "verification_90d"]
    end = frame.groupby("dataset")["time"].transform("max")
    wide = _wide(frame.assign(years=(end - frame["time"]) / YEAR), "spdisc", [*RUN_CELL, "years"])
    wide["band"] = _year_bands(wide["years"])
    return wide


def _year_bands(years: pd.Series) -> pd.Series:
    """``[a, b) years before the end`` of each value."""
    edges = YEARS_BEFORE_END
    names = [f"{a}-{b} y" if np.isfinite(b) else f">= {a} y" for a, b in itertools.pairwise(edges)]
    return pd.cut(years, list(edges), right=False, labels=names)


def defect_rates(datasets: list[str]) -> pd.Series:
    """The share (%) of defect-inducing commits among those of each band of years before the end
    of its spdisc file, over the ``datasets`` (their files converted with the spdisc preset)."""
    from delaycv.data.convert import load_stream

    parts = []
    quiet = logging.getLogger("delaycv.data")  # the truncated last lines the preset drops
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        for name in datasets:
            stream = load_stream(SPDISC / f"{name}.arff", preset="spdisc")
            years = pd.Series((stream.time.max() - stream.time) / YEAR)
            parts.append(pd.DataFrame({"band": _year_bands(years), "label": stream.label}))
    finally:
        quiet.setLevel(level)
    both = pd.concat(parts, ignore_index=True)
    return (100 * both.groupby("band", observed=True)["label"].mean()).rename("defects (%)")


def maturity_table(data: pd.DataFrame) -> pd.DataFrame:
    """The ``maturity`` table: the errors of G-mean and recall_1 by band, and the defect rate of
    the commits of each band."""
    data = data[data["metric"].isin(["gmean", "recall_1"])]
    table = error_table(data, ["metric", "band"]).drop(columns="no estimate (%)")
    rates = defect_rates(sorted(data["dataset"].unique()))
    table = table.merge(rates.reset_index(), on="band", how="left")
    table = table.sort_values(["metric", "band"], kind="stable")  # the bands in their order
    return table.assign(band=table["band"].astype(str))


def error_table(data: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Median errors, the share of the error removed, the share of cells made worse, the signed
    means."""
    ok = data.dropna(subset=["observed", "true", "corrected"])
    g = ok.groupby(by, sort=False, observed=True)
    out = pd.DataFrame(
        {
            "cells": g.size(),
            "median |obs - true|": g["err_observed"].median(),
            "median |corr - true|": g["err_corrected"].median(),
            "mean obs - true": g.apply(lambda x: (x["observed"] - x["true"]).mean()),
            "mean corr - true": g.apply(lambda x: (x["corrected"] - x["true"]).mean()),
            "worse (%)": g.apply(lambda x: 100 * (x["err_corrected"] > x["err_observed"]).mean()),
        }
    )
    out["removed (%)"] = 100 * (1 - out["median |corr - true|"] / out["median |obs - true|"])
    # no share of an error that rounds to 0.000 (a ratio of two medians near 0 says nothing)
    out.loc[out["median |obs - true|"] < 0.0005, "removed (%)"] = np.nan
    missing = data.groupby(by, sort=False, observed=True)["corrected"].apply(
        lambda x: x.isna().mean() * 100
    )
    out["no estimate (%)"] = missing
    cols = [
        "cells",
        "median |obs - true|",
        "median |corr - true|",
        "removed (%)",
        "worse (%)",
        "mean obs - true",
        "mean corr - true",
        "no estimate (%)",
    ]
    return out[cols].reset_index()


def coverage_table(data: pd.DataFrame) -> pd.DataFrame:
    """How often the 95 % interval over folds of corrected holds the mean over folds of true."""
    keys = ["study", "metric", "family", "dataset", "learner", "seed", "policy", "checkpoint"]
    g = data.dropna(subset=["corrected", "true"]).groupby(keys, sort=False)
    n = g["corrected"].count()
    mean = g["corrected"].mean()
    sd = g["corrected"].std(ddof=1)
    half = stdtrit(np.maximum(n - 1, 1), 0.975) * sd / np.sqrt(n)
    truth = g["true"].mean()
    held = ((truth >= mean - half) & (truth <= mean + half)).rename("held")
    width = (2 * half).rename("width")
    per = pd.concat([held, width, n.rename("folds")], axis=1).reset_index()
    per = per[per["folds"] >= 2]
    out = per.groupby(["study", "metric", "family"], sort=False).agg(
        intervals=("held", "size"),
        coverage=("held", lambda x: 100 * x.mean()),
        median_width=("width", "median"),
    )
    out = out.rename(columns={"coverage": "coverage (%)", "median_width": "median width"})
    return out.reset_index()


def fix_shares(dataset_path: Path, learner="moa:trees.HoeffdingTree", window_days=90):
    """What the replay knows of the correction's assumptions on one stream: among the defective
    instances, the share whose fix comes within ``window_days``, for those the learner predicted
    positive and negative (fold 0 of a hitl 7d/90d run), and in each half of the stream."""
    import delaycv
    from delaycv.data.convert import load_stream

    stream = load_stream(dataset_path, preset="commit-guru")
    run = delaycv.evaluate(
        stream, learner, policy="hitl", pos_window="7d", neg_window="90d",
        validation="bootstrap", folds=1, predictions=True, progress=False, corrected=False,
    )  # fmt: skip
    log = run.predictions
    defect = stream.label == 1
    within = (stream.label_time - stream.time) <= window_days * 86400
    pred = log["pred"].to_numpy()
    half = np.arange(len(stream)) < len(stream) // 2
    return {
        "defects": int(defect.sum()),
        "ever fixed (%)": 100 * np.isfinite(stream.label_time[defect]).mean(),
        "fixed in 90 d, pred. 1 (%)": 100 * within[defect & (pred == 1)].mean(),
        "fixed in 90 d, pred. 0 (%)": 100 * within[defect & (pred == 0)].mean(),
        "fixed in 90 d, 1st half (%)": 100 * within[defect & half].mean(),
        "fixed in 90 d, 2nd half (%)": 100 * within[defect & ~half].mean(),
    }


def assumptions_table(datasets: list[str]) -> pd.DataFrame:
    rows = []
    for name in datasets:
        path = next(CUT2YEARS.glob(f"0_{name}*.arff"), None)
        if path is None:
            continue
        rows.append({"project": name, **fix_shares(path)})
    return pd.DataFrame(rows)


#: the declared inspection error rates of the simulated streams
SIMULATED_RATES = (0.0, 0.1, 0.2, 0.3)


def simulated_run(rate: float, seed: int) -> list[tuple]:
    """(rate, seed, metric, observed - true, corrected - true) of one simulated stream."""
    return [(rate, seed, *row) for row in simulated_errors(rate, seed)]


def seed_count(text: str) -> int:
    """``--simulated``'s value: 0 (no table) or at least 2 seeds (a standard error needs two)."""
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n != 0 and n < 2:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected 0 (no table) or a count of seeds >= 2"
        )
    return n


def simulated_table(seeds: int) -> pd.DataFrame:
    """The ``simulated`` table (module docstring) over seeds 1 .. ``seeds``."""
    jobs = [(rate, seed) for rate in SIMULATED_RATES for seed in range(1, seeds + 1)]
    with ProcessPoolExecutor(os.cpu_count()) as pool:
        runs = pool.map(simulated_run, *zip(*jobs, strict=True))
        rows = [row for run in runs for row in run]
    data = pd.DataFrame(rows, columns=["rate", "seed", "metric", "observed", "corrected"])
    out = []
    for (rate, metric), g in data.groupby(["rate", "metric"], sort=True):
        se = g["corrected"].std(ddof=1) / math.sqrt(len(g))
        out.append(
            {
                "inspection error": f"{rate:g}",
                "metric": metric,
                "seeds": len(g),
                "observed - true": f"{g['observed'].mean():+.4f}",
                "corrected - true": f"{g['corrected'].mean():+.4f}",
                "its SE": f"{se:.4f}",
                "in SE": f"{g['corrected'].mean() / se:+.1f}",
            }
        )
    return pd.DataFrame(out)


def study_tables(data: pd.DataFrame, assumptions: bool) -> dict[str, pd.DataFrame]:
    """The tables of the studies' ``cells`` (with the column ``pooled``, one value) of the module
    docstring: error, coverage, by_window, by_project and, with ``assumptions``, the replay of the
    assumptions."""
    family = error_table(data, ["study", "metric", "family"])
    pooled = error_table(data, ["study", "metric", "pooled"]).rename(columns={"pooled": "family"})
    gmean = data[data["metric"] == "gmean"]
    tables = {
        "error": pd.concat([family, pooled]).sort_values(["study", "metric"], kind="stable"),
        "coverage": coverage_table(data),
        "by_window": error_table(gmean, ["study", "family", "P"]),
        "by_project": error_table(gmean, ["study", "dataset"]),
    }
    if assumptions:
        tables["assumptions"] = assumptions_table(sorted(data["dataset"].unique()))
    return tables


def markdown(frame: pd.DataFrame, digits: int = 3) -> str:
    def cell(v) -> str:
        if isinstance(v, float | np.floating):
            if np.isnan(v):
                return ""
            return f"{v:.1f}" if abs(v) >= 10 else f"{v:.{digits}f}"
        return str(v)

    header = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.to_numpy()]
    return "\n".join([header, rule, *body])


def write_doc(doc: Path, tables: dict[str, str]) -> None:
    text = doc.read_text()
    for name, table in tables.items():
        pattern = re.compile(
            rf"(<!-- corrected: {name} -->\n).*?(<!-- /corrected: {name} -->)", re.S
        )
        if not pattern.search(text):
            sys.exit(f"corrected_validation: {doc} has no block <!-- corrected: {name} -->")
        text = pattern.sub(lambda m, t=table: m.group(1) + t + "\n" + m.group(2), text)
    doc.write_text(text)


def _studies_run(studies: dict[str, Path], make_cells, what: str = "") -> dict:
    """``make_cells(frame, study)`` of each study that has run (at the key commits); a line
    names each one that has not."""
    out = {}
    for study, root in studies.items():
        try:
            out[study] = make_cells(read_study(root), study)
        except FileNotFoundError as err:
            print(f"corrected_validation: skipped {study}{what}: {err}", file=sys.stderr)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="folder for the cells and tables as CSV")
    parser.add_argument("--doc", type=Path, help="write the tables into this doc's blocks")
    parser.add_argument(
        "--no-assumptions", action="store_true", help="skip the replay of the assumptions"
    )
    parser.add_argument(
        "--simulated", type=seed_count, default=0, metavar="N",
        help="add the simulated streams' table over N seeds (48 for the doc; 0: none)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    tables = {}
    if args.simulated:
        tables["simulated"] = simulated_table(args.simulated)
    found = _studies_run(STUDIES, cells)
    verified = _studies_run(VERIFICATION, verification_cells, " (verification)")
    try:
        maturity = maturity_cells(read_merged(MATURITY, "time"))
    except FileNotFoundError as err:
        print(f"corrected_validation: skipped the spdisc study: {err}", file=sys.stderr)
        maturity = None
    if not found and not verified and maturity is None and not tables:
        sys.exit("corrected_validation: no study has run (see the usage above)")
    data = pd.concat(found.values(), ignore_index=True).assign(pooled="pooled") if found else None
    if data is not None:
        tables |= study_tables(data, assumptions=not args.no_assumptions)
    if verified:
        tables["verification"] = verification_table(pd.concat(verified.values()))
    if maturity is not None:
        tables["maturity"] = maturity_table(maturity)
    text = {name: markdown(table) for name, table in tables.items()}
    for name, table in text.items():
        print(f"## {name}\n\n{table}\n")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        if data is not None:
            data.to_csv(args.out / "cells.csv", index=False)
        for name, table in tables.items():
            table.to_csv(args.out / f"{name}.csv", index=False)
    if args.doc:
        write_doc(args.doc, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
