"""The HITL study replicated: the tables of docs/replication.md, from the workflow's outputs.

Run the two replication configs first (each writes its tables under its own `results:` folder; the
run directories are shared, so ideal and the common hitl runs are evaluated once):

    snakemake --cores 2 --profile profiles/default --configfile config/hitl-rq1.yaml
    snakemake --cores 2 --profile profiles/default --configfile config/hitl-rq3.yaml
    python benchmarks/hitl_replication.py [--out results/replication]

Reads each study's policy contrasts (`<results>/tests/<dataset>/contrasts.parquet`, against
`ideal`, at commits 1000 ... 5000) and the study code's own fold averages
(`../shared/reference/hitl-study/means.csv.gz`, read where it is, never copied), and prints, as
Markdown: the ideal values side by side, each setting's median validity with its Scott-Knott ESD
group in both, how far the two agree, and the study's questions answered by each. The full tables
go to `--out` as CSV.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from delaycv import replication as rep  # noqa: E402
from delaycv.results import read_table  # noqa: E402

STUDY = REPO.parent / "shared" / "reference" / "hitl-study" / "means.csv.gz"
STUDIES = {"rq1": REPO / "results" / "hitl-rq1", "rq3": REPO / "results" / "hitl-rq3"}


def read_contrasts(root: Path) -> pd.DataFrame:
    paths = sorted(root.glob("tests/*/contrasts.parquet"))
    if not paths:
        sys.exit(
            f"hitl_replication: no contrasts under {root}/tests/ (run the study's config first)"
        )
    return pd.concat([read_table(p) for p in paths], ignore_index=True)


def markdown(frame: pd.DataFrame, digits: int = 1) -> str:
    def cell(v) -> str:
        if isinstance(v, float | np.floating):
            return "" if np.isnan(v) else f"{v:.{digits}f}"
        return str(v)

    lines = ["| " + " | ".join(map(str, frame.columns)) + " |"]
    lines.append("|" + "---|" * len(frame.columns))
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(False)]
    return "\n".join(lines)


def settings_table(study: pd.DataFrame, ours: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per setting: median validity and SK-ESD group in the study and in delaycv."""
    out = []
    for name, validity in (("study", study), ("delaycv", ours)):
        ranks = rep.validity_ranks(validity[validity["metric"] == metric])
        ranks = ranks.set_index("treatment")[["median", "group"]]
        out.append(ranks.add_suffix(f"_{name}"))
    table = out[0].join(out[1], how="inner")
    table = table.sort_values(["group_delaycv", "median_delaycv"], ascending=[True, False])
    return table.rename_axis("setting").reset_index()


#: the effort-aware measures the replication configs test (the study did not measure them)
EFFORT = ("popt", "effort_recall_20")


def effort_table(observed: pd.DataFrame, true: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per setting, delaycv alone: the median validity of the estimate and its SK-ESD group, and
    the median signed gaps to ideal (percentage points) of the estimate (observed labels) and of
    the model's true-label value."""
    mine = observed[observed["metric"] == metric]
    ranks = rep.validity_ranks(mine).set_index("treatment")[["median", "group"]]
    ranks.columns = ["validity", "group"]

    def gap(frame: pd.DataFrame) -> pd.Series:
        rows = frame[frame["metric"] == metric]
        return (rows["estimate"] - rows["ideal"]).groupby(rows["policy"]).median()

    table = ranks.join(gap(observed).rename("estimate - ideal"))
    table = table.join(gap(true).rename("true - ideal"))
    table = table.sort_values(["group", "validity"], ascending=[True, False])
    return table.rename_axis("setting").reset_index()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rq1", type=Path, default=STUDIES["rq1"], help="RQ1's results folder")
    parser.add_argument("--rq3", type=Path, default=STUDIES["rq3"], help="RQ3's results folder")
    parser.add_argument("--study", type=Path, default=STUDY, help="the study's means.csv.gz")
    parser.add_argument("--out", type=Path, default=REPO / "results" / "replication")
    args = parser.parse_args()

    means = pd.read_csv(args.study)
    means = means[means["at"].str.startswith("commit_")]
    study = rep.study_validity(means)
    contrasts = pd.concat([read_contrasts(args.rq1), read_contrasts(args.rq3)], ignore_index=True)
    keys = ["dataset", "learner", "reference", "policy", "at", "metric"]
    contrasts = contrasts.drop_duplicates(keys)  # ideal-based rows of runs both studies share
    observed = rep.delaycv_validity(contrasts, reference="observed")
    true = rep.delaycv_validity(contrasts, reference="true")
    study = study[study["policy"].isin(set(observed["policy"]))]
    both = rep.side_by_side(study, observed)
    args.out.mkdir(parents=True, exist_ok=True)
    both.to_csv(args.out / "validity_side_by_side.csv", index=False)
    true.to_csv(args.out / "true_value_against_ideal.csv", index=False)

    print("## Ideal at the key commits (percent; study | delaycv)\n")
    ideal = both.drop_duplicates(["project", "at", "metric"])
    ideal = ideal[ideal["metric"] == "gmean"].assign(
        cell=lambda f: [
            f"{a:.1f} / {b:.1f}" for a, b in zip(f["ideal_study"], f["ideal_delaycv"], strict=True)
        ]
    )
    print(markdown(ideal.pivot(index="project", columns="at", values="cell").reset_index()))

    for metric in rep.METRICS:
        table = settings_table(study, observed, metric)
        table.to_csv(args.out / f"settings_{metric}.csv", index=False)
        rho = stats.spearmanr(table["median_study"], table["median_delaycv"]).statistic
        print(f"\n## Validity of the settings, {metric} (median over projects x commits)\n")
        print(markdown(table))
        same = (table["group_study"] == table["group_delaycv"]).mean()
        print(
            f"\nSpearman correlation of the medians: {rho:.2f}; settings in the same SK-ESD "
            f"group in both: {100 * same:.0f} %"
        )

    print("\n## The study's questions (validity differences in percentage points)\n")
    rows = []
    for metric in rep.METRICS:
        for name, validity in (("study", study), ("delaycv", observed), ("delaycv true", true)):
            f = rep.findings(validity, metric).assign(metric=metric, source=name)
            rows.append(f)
    answers = pd.concat(rows, ignore_index=True)
    answers.to_csv(args.out / "findings.csv", index=False)
    print(markdown(answers[["metric", "question", "source", "mean", "wins", "n", "answer"]], 2))

    effort = [m for m in EFFORT if m in set(observed["metric"])]
    if effort:
        print("\n## Effort-aware measures against ideal (delaycv alone)\n")
        ideal = observed[observed["metric"].isin(effort)].drop_duplicates(
            ["project", "at", "metric"]
        )
        ideal = ideal.groupby(["project", "metric"])["ideal"].median().unstack("metric")
        print("Ideal's own value, median over the key commits (percent):\n")
        print(markdown(ideal.reset_index()))
    for metric in effort:
        table = effort_table(observed, true, metric)
        table.to_csv(args.out / f"effort_{metric}.csv", index=False)
        print(f"\n### {metric}: validity of the settings (median over projects x commits)\n")
        print(markdown(table))
    if effort:
        rows = [
            rep.findings(validity, metric).assign(metric=metric, source=name)
            for metric in effort
            for name, validity in (("delaycv", observed), ("delaycv true", true))
        ]
        effort_answers = pd.concat(rows, ignore_index=True)
        effort_answers.to_csv(args.out / "effort_findings.csv", index=False)
        print("\n### The study's questions, asked of the effort-aware measures\n")
        columns = ["metric", "question", "source", "mean", "wins", "n", "answer"]
        print(markdown(effort_answers[columns], 2))
    print(f"\nCSV tables: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
