"""The HITL study replicated: the tables of docs/replication.md, from the workflow's outputs.

Run the replication configs first (each writes its tables under its own `results:` folder; the
run directories are shared, so ideal and the common hitl runs are evaluated once):

    snakemake --cores 2 --profile profiles/default --configfile config/hitl-rq1.yaml
    snakemake --cores 2 --profile profiles/default --configfile config/hitl-rq3.yaml
    snakemake --cores 2 --profile profiles/default --configfile config/hitl-rq1-moa.yaml
    python benchmarks/hitl_replication.py [--out results/replication] [--doc docs/replication.md]

Each section needs its studies (:data:`SECTIONS`): the study's group names its own numbers alone;
delaycv with river's tree RQ1 and RQ3; MOA's tree's settings and findings RQ1 with MOA's tree;
MOA's tree beside river's RQ1 and RQ1 with MOA's tree. The script writes the sections whose
studies have run and names each one it skipped, with the config that would make it.

Reads each study's policy contrasts (`<results>/tests/<dataset>/contrasts.parquet`, against
`ideal`, at commits 1000 ... 5000) and the study code's own fold averages
(`../shared/reference/hitl-study/means.csv.gz`, read where it is, never copied), and prints, as
Markdown: the ideal values side by side, each setting's median validity with its Scott-Knott ESD
group in both, how far the two agree, the study's questions answered by each, and the effort-aware
measures against ideal (delaycv alone). The full tables go to `--out` as CSV; `--doc` writes the
tables into the doc's marked blocks (`<!-- replication: NAME -->` ... `<!-- /replication: NAME
-->`), so that the doc's tables and verdicts are the numbers' own.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from delaycv.stats import replication as rep  # noqa: E402
from delaycv.tables.results import read_table  # noqa: E402

STUDY = REPO.parent / "shared" / "reference" / "hitl-study" / "means.csv.gz"
STUDIES = {
    "rq1": REPO / "results" / "hitl-rq1",
    "rq3": REPO / "results" / "hitl-rq3",
    "rq1-moa": REPO / "results" / "hitl-rq1-moa",
}

#: The sections of the output: the blocks each writes and the studies it reads (besides the
#: study's own numbers, which every section reads).
SECTIONS = {
    "the study's Scott-Knott ESD group names": ("sk_naming", ()),
    "delaycv with river's tree": ("ideal, settings_*, findings, effort_*", ("rq1", "rq3")),
    "MOA's tree: settings and findings": ("moa_settings_*, moa_findings", ("rq1-moa",)),
    "MOA's tree beside river's": ("moa_ideal", ("rq1", "rq1-moa")),
}


def read_contrasts(root: Path) -> pd.DataFrame | None:
    """The policy contrasts of the study whose results folder is ``root`` (None: it has none)."""
    paths = sorted(root.glob("tests/*/contrasts.parquet"))
    if not paths:
        return None
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


def settings_blocks(
    study: pd.DataFrame, ours: pd.DataFrame, out: Path, name: str
) -> dict[str, str]:
    """Per metric, the block ``<name>_<metric>``: :func:`settings_table` (also written to
    ``out/<name>_<metric>.csv``) with how far the two orders and groupings agree."""
    found = {}
    for metric in rep.METRICS:
        table = settings_table(study, ours, metric)
        table.to_csv(out / f"{name}_{metric}.csv", index=False)
        rho = stats.spearmanr(table["median_study"], table["median_delaycv"]).statistic
        same = (table["group_study"] == table["group_delaycv"]).mean()
        found[f"{name}_{metric}"] = (
            markdown(table) + f"\n\nSpearman correlation of the two medians: **{rho:.2f}**; "
            f"the same SK-ESD group in both: {100 * same:.0f} % of the settings."
        )
    return found


def naming_table(study: pd.DataFrame, out: Path) -> str:
    """Per metric, on the study's own validity: how many settings' ``np`` groups R's ScottKnottESD
    3.0.0 would print differently from the partition's order (R names the groups in mean order,
    the partition is in median order: delaycv.stats.scott_knott.r_np_group_names). The per-setting table
    goes to ``out/sk_naming.csv``."""
    named = rep.validity_r_naming(study)
    named.to_csv(out / "sk_naming.csv", index=False)
    rows = []
    for metric in rep.METRICS:
        table = named[named["metric"] == metric]
        moved = table[table["group"] != table["group_r"]]
        rows.append(
            {
                "metric": metric,
                "settings": len(table),
                "groups": table["group"].nunique(),
                "group changes": len(moved),
                "settings whose group changes (R's / the partition's)": ", ".join(
                    f"{t} ({r}/{g})"
                    for t, r, g in zip(
                        moved["treatment"], moved["group_r"], moved["group"], strict=True
                    )
                )
                or "none",
            }
        )
    return markdown(pd.DataFrame(rows))


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


def blocks(study: pd.DataFrame, contrasts: pd.DataFrame, out: Path) -> dict[str, str]:
    """The tables of docs/replication.md, as Markdown blocks by name (the CSVs go to ``out``)."""
    keys = ["dataset", "learner", "reference", "policy", "at", "metric"]
    contrasts = contrasts.drop_duplicates(keys)  # ideal-based rows of runs both studies share
    observed = rep.delaycv_validity(contrasts, reference="observed")
    true = rep.delaycv_validity(contrasts, reference="true")
    corrected = rep.delaycv_validity(contrasts, reference="corrected")
    study = study[study["policy"].isin(set(observed["policy"]))]
    both = rep.side_by_side(study, observed)
    out.mkdir(parents=True, exist_ok=True)
    both.to_csv(out / "validity_side_by_side.csv", index=False)
    true.to_csv(out / "true_value_against_ideal.csv", index=False)
    found = {}

    ideal = both.drop_duplicates(["project", "at", "metric"])
    ideal = ideal[ideal["metric"] == "gmean"].assign(
        cell=lambda f: [
            f"{a:.1f} / {b:.1f}" for a, b in zip(f["ideal_study"], f["ideal_delaycv"], strict=True)
        ]
    )
    found["ideal"] = markdown(
        ideal.pivot(index="project", columns="at", values="cell").reset_index()
    )

    found.update(settings_blocks(study, observed, out, "settings"))

    rows = []
    sources = [("study", study), ("delaycv", observed), ("delaycv true", true)]
    if not corrected.empty:
        sources.append(("delaycv corrected", corrected))
    for metric in rep.METRICS:
        for name, validity in sources:
            rows.append(rep.findings(validity, metric).assign(metric=metric, source=name))
    answers = pd.concat(rows, ignore_index=True)
    answers.to_csv(out / "findings.csv", index=False)
    columns = ["metric", "question", "source", "mean", "wins", "n", "answer"]
    found["findings"] = markdown(answers[columns], 2)

    effort = [m for m in EFFORT if m in set(observed["metric"])]
    if effort:
        values = observed[observed["metric"].isin(effort)].drop_duplicates(
            ["project", "at", "metric"]
        )
        values = values.groupby(["project", "metric"])["ideal"].median().unstack("metric")
        found["effort_ideal"] = markdown(values.reset_index())
        for metric in effort:
            table = effort_table(observed, true, metric)
            table.to_csv(out / f"effort_{metric}.csv", index=False)
            found[f"effort_{metric}"] = markdown(table)
        rows = [
            rep.findings(validity, metric).assign(metric=metric, source=name)
            for metric in effort
            for name, validity in (("delaycv", observed), ("delaycv true", true))
        ]
        effort_answers = pd.concat(rows, ignore_index=True)
        effort_answers.to_csv(out / "effort_findings.csv", index=False)
        found["effort_findings"] = markdown(effort_answers[columns], 2)
    return found


def _moa_ideal(study: pd.DataFrame, river: pd.DataFrame, observed: pd.DataFrame, out: Path) -> str:
    """The ideal G-mean of the study, of delaycv with river's tree and with MOA's, per project and
    checkpoint (``out/moa_ideal.csv``: every metric), with the median gaps to the study."""
    keys = ["project", "at", "metric"]
    ideal = (
        study.drop_duplicates(keys)[[*keys, "ideal"]]
        .merge(river.drop_duplicates(keys)[[*keys, "ideal"]], on=keys, suffixes=("", "_river"))
        .merge(observed.drop_duplicates(keys)[[*keys, "ideal"]], on=keys, suffixes=("", "_moa"))
    )
    ideal.to_csv(out / "moa_ideal.csv", index=False)
    gmean = ideal[ideal["metric"] == "gmean"].assign(
        cell=lambda f: [
            f"{a:.1f} / {b:.1f} / {c:.1f}"
            for a, b, c in zip(f["ideal"], f["ideal_river"], f["ideal_moa"], strict=True)
        ]
    )
    gaps = []
    for name, column in (("river", "ideal_river"), ("MOA", "ideal_moa")):
        gap = (ideal[column] - ideal["ideal"]).abs().groupby(ideal["metric"]).median()
        gaps.append(f"{name}'s tree " + ", ".join(f"{m} {gap[m]:.1f}" for m in rep.METRICS))
    return (
        markdown(gmean.pivot(index="project", columns="at", values="cell").reset_index())
        + "\n\nMedian |delaycv - study| of the ideal values (percentage points), per metric: "
        + "; ".join(gaps)
        + "."
    )


def moa_blocks(
    study: pd.DataFrame, river: pd.DataFrame | None, contrasts: pd.DataFrame, out: Path
) -> dict[str, str]:
    """RQ1 with the study's own learner, MOA's HoeffdingTree (config/hitl-rq1-moa.yaml): the ideal
    G-mean of the study, of delaycv with river's tree (``river``: delaycv's validity of RQ1) and
    of delaycv with MOA's; each setting's validity and SK-ESD group in the study and in delaycv
    with MOA's tree; the study's questions asked of it. What differs between the study and
    delaycv with MOA's tree is the evaluator alone (docs/replication.md). ``river`` None (RQ1
    with river's tree has not run): no ``moa_ideal``."""
    observed = rep.delaycv_validity(contrasts, reference="observed")
    true = rep.delaycv_validity(contrasts, reference="true")
    study = study[study["policy"].isin(set(observed["policy"]))]
    out.mkdir(parents=True, exist_ok=True)
    found = {}
    if river is not None:  # (RQ1 with river's tree has not run: no moa_ideal)
        found["moa_ideal"] = _moa_ideal(study, river, observed, out)
    found.update(settings_blocks(study, observed, out, "moa_settings"))
    rows = []
    for metric in rep.METRICS:
        for name, validity in (
            ("study", study),
            ("delaycv MOA", observed),
            ("delaycv MOA true", true),
        ):
            rows.append(rep.findings(validity, metric).assign(metric=metric, source=name))
    answers = pd.concat(rows, ignore_index=True)
    answers.to_csv(out / "moa_findings.csv", index=False)
    columns = ["metric", "question", "source", "mean", "wins", "n", "answer"]
    found["moa_findings"] = markdown(answers[columns], 2)
    return found


def conclusion(frame: pd.DataFrame, alpha: float = 0.05) -> pd.Series:
    """What a contrast row concludes: ``worse``/``better`` than ideal (Holm-adjusted p <=
    ``alpha``, by the sign of the difference) or ``n.s.``."""
    sign = np.where(frame["difference"] < 0, "below", "above")
    return pd.Series(np.where(frame["p_holm"] <= alpha, sign, "n.s."), index=frame.index)


def corrected_block(contrasts: pd.DataFrame) -> str:
    """Per setting and metric, over the projects and key commits: the median gap to ideal of the
    policy's estimate (observed labels), of its corrected estimate and of its true value (in
    percentage points), and how often the estimate's and the corrected estimate's conclusion
    (below ideal, above, or no significant difference; Holm over the policies) is the true
    value's."""
    keys = ["dataset", "learner", "policy", "at", "metric"]
    rows = contrasts[contrasts["checkpoint"].notna() & (contrasts["reference_policy"] == "ideal")]
    rows = rows.drop_duplicates([*keys, "reference"])
    wide = {
        r: rows[rows["reference"] == r].set_index(keys) for r in ("observed", "corrected", "true")
    }
    both = wide["true"].index.intersection(wide["observed"].index)
    both = both.intersection(wide["corrected"].index)
    table = pd.DataFrame(index=both)
    for r, frame in wide.items():
        frame = frame.loc[both]
        table[f"{r} - ideal"] = 100.0 * frame["difference"]
        table[f"_{r}"] = conclusion(frame)
    table["estimate as true (%)"] = 100.0 * (table["_observed"] == table["_true"])
    table["corrected as true (%)"] = 100.0 * (table["_corrected"] == table["_true"])
    table = table.reset_index()
    table["setting"] = [rep.study_policy(p) for p in table["policy"]]
    columns = [
        "observed - ideal",
        "corrected - ideal",
        "true - ideal",
        "estimate as true (%)",
        "corrected as true (%)",
    ]
    out = table.groupby(["metric", "setting"], sort=False)[columns].agg(
        {c: ("median" if c.endswith("ideal") else "mean") for c in columns}
    )
    pooled = table.groupby("metric", sort=False)[columns].agg(
        {c: ("median" if c.endswith("ideal") else "mean") for c in columns}
    )
    pooled.index = pd.MultiIndex.from_arrays(
        [pooled.index, ["all"] * len(pooled)], names=["metric", "setting"]
    )
    out = pd.concat([out, pooled]).rename(
        columns={
            "observed - ideal": "estimate - ideal",
            "corrected - ideal": "corrected estimate - ideal",
        }
    )
    order = {m: i for i, m in enumerate(rep.METRICS)}
    out = out.reset_index().sort_values(
        ["metric", "setting"], key=lambda c: c.map(order) if c.name == "metric" else c
    )
    return markdown(out[out["metric"].isin(rep.METRICS)])


def write_doc(doc: Path, found: dict[str, str]) -> None:
    """Replace each block of ``doc`` between ``<!-- replication: NAME -->`` and
    ``<!-- /replication: NAME -->`` by the block ``NAME`` (every block must have its markers)."""
    text = doc.read_text()
    missing = []
    for name, block in found.items():
        begin, end = f"<!-- replication: {name} -->", f"<!-- /replication: {name} -->"
        pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
        if not pattern.search(text):
            missing.append(name)
            continue
        replacement = f"{begin}\n{block}\n{end}"
        text = pattern.sub(lambda _, new=replacement: new, text)
    if missing:
        sys.exit(f"hitl_replication: {doc} has no markers for {', '.join(missing)}")
    doc.write_text(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rq1", type=Path, default=STUDIES["rq1"], help="RQ1's results folder")
    parser.add_argument("--rq3", type=Path, default=STUDIES["rq3"], help="RQ3's results folder")
    parser.add_argument(
        "--rq1-moa",
        type=Path,
        default=STUDIES["rq1-moa"],
        help="RQ1 with MOA's HoeffdingTree (config/hitl-rq1-moa.yaml); skipped when absent",
    )
    parser.add_argument("--study", type=Path, default=STUDY, help="the study's means.csv.gz")
    parser.add_argument("--out", type=Path, default=REPO / "results" / "replication")
    parser.add_argument(
        "--doc", type=Path, default=None, help="write the tables into this doc's marked blocks"
    )
    args = parser.parse_args()

    means = pd.read_csv(args.study)
    means = means[means["at"].str.startswith("commit_")]
    study = rep.study_validity(means)
    folders = {"rq1": args.rq1, "rq3": args.rq3, "rq1-moa": args.rq1_moa}
    contrasts = {name: read_contrasts(root) for name, root in folders.items()}
    args.out.mkdir(parents=True, exist_ok=True)
    found = {"sk_naming": naming_table(study, args.out)}
    if contrasts["rq1"] is not None and contrasts["rq3"] is not None:
        both = pd.concat([contrasts["rq1"], contrasts["rq3"]], ignore_index=True)
        found.update(blocks(study, both, args.out))
    if contrasts["rq1-moa"] is not None:
        river = None
        if contrasts["rq1"] is not None:
            keys = ["dataset", "learner", "reference", "policy", "at", "metric"]
            river = rep.delaycv_validity(contrasts["rq1"].drop_duplicates(keys))
        found.update(moa_blocks(study, river, contrasts["rq1-moa"], args.out))
    for section, (names, needs) in SECTIONS.items():
        absent = [n for n in needs if contrasts[n] is None]
        if absent:
            print(
                f"hitl_replication: skipped {section} ({names}): no contrasts under "
                + ", ".join(f"{folders[n]}/tests/ (run config/hitl-{n}.yaml)" for n in absent)
            )
    for key, name in (("rq1", "rq1"), ("rq1_moa", "rq1-moa")):
        table = contrasts[name]
        if table is None:
            continue
        if "corrected" in set(table["reference"]):
            found[f"corrected_{key}"] = corrected_block(table)
        else:
            print(f"hitl_replication: {folders[name]} has no contrasts on the corrected reference")
    for name, block in found.items():
        print(f"## {name}\n\n{block}\n")
    if args.doc is not None:
        write_doc(args.doc, found)
        print(f"tables written into {args.doc}")
    print(f"CSV tables: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
