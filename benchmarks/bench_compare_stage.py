"""The whole comparison stage of a study on a merged table from real data (issue 12, part 3).

Table: ``cut2years/0_brackets.csv`` (commit-guru preset, 11,914 commits) evaluated with 3 learners
(the ``Prior`` baseline, GaussianNB, HoeffdingTree) x 6 policies (ideal, delay_30d,
verification_90d, hitl_1d_15d, hitl_7d_90d, hitl_30d_90d) x 10 bootstrap folds x 2 seeds,
checkpoints every 250 (48), the default config's fading estimator: 34,560 rows with the ties and
zeros of real fold values (the baseline's recall is 0 in every fold). Run seed s is evaluated with
validation seed s, so the two seeds' bootstrap weights differ (the seed semantics of issue 12,
part 1): the tests have n = 20 distinct pairs. A second table copies seed 1 onto seed 2 (what a
fixed split and deterministic learners give): each test then uses its 10 distinct pairs once.
The 36 evaluations take about 15 minutes once on 2 shared cores; the merged table is cached in
``results/benchmarks/`` (delete it to rebuild).

Stage: exactly what ``scripts/compare.py`` (``delaycv.stages.compare``) does with the default config's ``tests``
section (metrics gmean, recall_1, fpr_1; both references; R = 5,000; checkpoints last) and its
default ``contrasts`` (every policy against ideal): read the table, ``run_tests`` at every
checkpoint (the strip) and at the last one, ``bias_tests``, ``policy_contrasts``, write the seven
files; then what ``scripts/rankings.py`` does at the same checkpoints: ``rank_across`` (Friedman,
Nemenyi, Scott-Knott ESD np) and ``rank_within`` (Scott-Knott ESD over the (seed, fold) pairs).
The table is one dataset, so every family across datasets gets a note (fewer than 3 datasets);
the rankings across datasets are also timed on a table of 8 datasets built from it (each a copy of
the rows at the chosen checkpoint with the metric values shifted by a small random amount per
dataset, seeded): the tests' cost depends on the table's shape, not on where it comes from.
It runs in a fresh subprocess; printed: the stage's wall time (after imports) and
the subprocess's peak RSS (``ru_maxrss``: interpreter, numpy/pandas/scipy, the table and the
stage), next to the peak RSS of a subprocess that only imports and reads the table.
Targets: under 10 s and 500 MB.

Baseline in the same run: the Wilcoxon column computed as before issue 12 (scipy's ``wilcoxon``,
``method="auto"``, one call per batch of rows with the same number of values) on the same rows (the
strip's differences over the distinct pairs), timed on a sample of rows of each batch (with one of
its rows with a tie or zero, so the sample takes the path scipy takes for the whole batch) and
extrapolated to every row. Peak RSS of the imports and the read alone is dominated by numpy,
pandas, scipy and pyarrow's allocator.

    .venv/bin/python benchmarks/bench_compare_stage.py
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO.parent / "shared/datasets/commit_guru_dataset/cut2years/0_brackets.csv"
CACHE = REPO / "results/benchmarks/compare_stage_brackets.parquet"
LEARNERS = {
    "prior": "Prior",
    "nb": "naive_bayes.GaussianNB",
    "ht": "tree.HoeffdingTreeClassifier",
}
POLICIES = ["ideal", "delay_30d", "verification_90d", "hitl_1d_15d", "hitl_7d_90d", "hitl_30d_90d"]
SEEDS = (1, 2)
FOLDS = 10
#: The default config's tests section (config.yaml).
TESTS = {
    "metrics": ["gmean", "recall_1", "fpr_1"],
    "references": ["observed", "true"],
    "resamples": 5000,
    "alpha": 0.05,
    "seed": 1,
    "checkpoints": "last",
}
LIMIT_SECONDS = 10.0
LIMIT_MB = 500.0


def merged_table() -> pd.DataFrame:
    if CACHE.is_file():
        return pd.read_parquet(CACHE)
    from delaycv.data.convert import load_stream
    from delaycv.engine import evaluate
    from delaycv.protocol.settings import make_settings
    from delaycv.tables.results import write_table

    stream = load_stream(SOURCE, preset="commit-guru", dataset="brackets")
    frames = []
    start = time.perf_counter()
    for seed in SEEDS:
        for policy in POLICIES:
            for name, learner in LEARNERS.items():
                settings = make_settings(
                    learner={"class": learner},
                    policy=policy,
                    validation={"scheme": "bootstrap", "folds": FOLDS, "seed": seed},
                    seed=seed,
                    estimator={"kind": "fading", "alpha": 0.99},
                    every=250,
                    run_keys={"dataset": "brackets", "learner": name},
                    timing=False,
                )
                result = evaluate(stream, settings)
                frames.append(result.folds)
                print(
                    f"  evaluated seed {seed} {policy} {name} "
                    f"[{time.perf_counter() - start:.0f} s]",
                    flush=True,
                )
    table = pd.concat(frames, ignore_index=True)
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    write_table(table, CACHE)
    return table


def repeated_seeds(table: pd.DataFrame) -> pd.DataFrame:
    """Seed 2's rows replaced by a copy of seed 1's."""
    first = table[table["seed"] == SEEDS[0]]
    return pd.concat([first, first.assign(seed=SEEDS[1])], ignore_index=True)


# --------------------------------------------------------------------------- the stage (child)


def child(path: str, stage: bool) -> None:
    """Run in a fresh interpreter: the rule's stage (or only the imports and the read) on ``path``;
    print one JSON line of timings and the peak RSS."""
    start = time.perf_counter()
    from delaycv.common.atomic import atomic_path
    from delaycv.stats.bias import bias_tests
    from delaycv.stats.contrasts import policy_contrasts
    from delaycv.stats.families import FAMILY, rank_across, rank_within
    from delaycv.stats.learner_tests import run_tests
    from delaycv.tables.results import read_table

    imported = time.perf_counter()
    table = read_table(path)
    timings = {"imports": imported - start, "read": time.perf_counter() - imported}
    counts = {}
    if stage:
        common = {k: TESTS[k] for k in ("metrics", "references", "resamples", "alpha", "seed")}
        t = time.perf_counter()
        strip = run_tests(table, checkpoints="all", **common)
        timings["strip"] = time.perf_counter() - t
        t = time.perf_counter()
        tests = run_tests(table, checkpoints=TESTS["checkpoints"], **common)
        timings["tests"] = time.perf_counter() - t
        t = time.perf_counter()
        bias = bias_tests(
            table, metrics=TESTS["metrics"], resamples=TESTS["resamples"], seed=TESTS["seed"]
        )
        timings["bias"] = time.perf_counter() - t
        t = time.perf_counter()
        contrasts = policy_contrasts(
            table, reference_policy="ideal", checkpoints=TESTS["checkpoints"], **common
        )
        timings["contrasts"] = time.perf_counter() - t
        t = time.perf_counter()
        rows, several = ranking_rows(table)
        timings["ranking_rows"] = time.perf_counter() - t
        t = time.perf_counter()
        across = rank_across(rows, TESTS["metrics"], alpha=TESTS["alpha"])
        timings["across"] = time.perf_counter() - t
        t = time.perf_counter()
        within = rank_within(rows, TESTS["metrics"])
        timings["within"] = time.perf_counter() - t
        t = time.perf_counter()
        across8 = rank_across(several, TESTS["metrics"], alpha=TESTS["alpha"])
        timings["across8"] = time.perf_counter() - t
        t = time.perf_counter()
        with tempfile.TemporaryDirectory() as out:
            for name, frame, csv in (
                ("tests", tests, True),
                ("strip", strip, False),
                ("bias", bias, True),
                ("contrasts", contrasts, True),
                ("friedman", across.friedman, True),
                ("scott_knott", across.scott_knott, True),
                ("within", within, True),
            ):
                with atomic_path(Path(out) / f"{name}.parquet") as tmp:
                    frame.to_parquet(tmp, index=False)
                if csv:
                    with atomic_path(Path(out) / f"{name}.csv") as tmp:
                        frame.to_csv(tmp, index=False)
        timings["write"] = time.perf_counter() - t
        counts = {
            "strip": len(strip),
            "tests": len(tests),
            "bias": len(bias),
            "contrasts": len(contrasts),
            "families": len(across.families()),
            "within": len(within),
            "families8": len(across8.families()),
            "tested8": int((across8.friedman.drop_duplicates(list(FAMILY))["note"] == "").sum()),
            "n": sorted(set(strip["n"].tolist())),
            "n_duplicates": sorted(set(strip["n_duplicates"].tolist())),
            "exact": int(strip["exact"].sum()),
        }
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
    print(json.dumps({"timings": timings, "counts": counts, "peak_mb": peak_mb}))


def ranking_rows(table: pd.DataFrame, copies: int = 8) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows the rankings rule ranks (references of the tests, chosen checkpoints, ``at``), and
    a table of ``copies`` datasets made of them (metric values shifted per dataset, seeded)."""
    from delaycv.stats.checkpoints import choose_checkpoints

    table = table[table["reference"].isin(TESTS["references"])]
    chosen = choose_checkpoints(table, TESTS["checkpoints"])
    found = chosen.dropna(subset=["checkpoint"]).astype({"checkpoint": "int64"})
    rows = table.merge(found[["dataset", "checkpoint", "at"]], on=["dataset", "checkpoint"])
    rng = np.random.default_rng(0)
    pieces = []
    for i in range(copies):
        shift = {m: rng.normal(0.0, 0.02, size=len(rows)) for m in TESTS["metrics"]}
        piece = rows.assign(dataset=f"copy{i}")
        for m in TESTS["metrics"]:
            piece[m] = (piece[m] + shift[m]).clip(0.0, 1.0)
        pieces.append(piece)
    return rows, pd.concat(pieces, ignore_index=True)


def in_child(path: Path, stage: bool) -> dict:
    args = [sys.executable, __file__, "--child", str(path)] + ([] if stage else ["--read-only"])
    proc = subprocess.run(args, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- the baseline


def old_wilcoxon(values: np.ndarray) -> np.ndarray:
    """The Wilcoxon column before issue 12, for a batch of rows with the same number of values."""
    from scipy import stats

    out = np.ones(len(values))
    rest = ~(values == 0).all(axis=1)
    if rest.any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[rest] = stats.wilcoxon(values[rest], axis=1).pvalue
    return out


def strip_differences(table: pd.DataFrame) -> np.ndarray:
    """The strip's differences d = a - b (rows: tests, columns: the pairs each test uses)."""
    from delaycv.stats.learner_tests import _learner_pairs

    sub = table[table["reference"].isin(TESTS["references"])]
    paired = _learner_pairs(sub, TESTS["metrics"])  # repeated seeds' pairs are NaN
    return paired.a - paired.b


def baseline(table: pd.DataFrame, sample: int = 6) -> tuple[float, float, int, int]:
    """(new Wilcoxon column in s, old one extrapolated in s, rows, sampled rows) on the strip."""
    from delaycv.stats.companions import wilcoxon_pvalues
    from delaycv.stats.permutation import _by_valid_count

    d = strip_differences(table)
    start = time.perf_counter()
    wilcoxon_pvalues(d)
    new = time.perf_counter() - start
    rng = np.random.default_rng(0)
    old = 0.0
    sampled = 0
    for _, rows, values in _by_valid_count(d):
        if values.shape[1] == 0:
            continue
        tie_or_zero = (values == 0).any(axis=1) | np.array(
            [len(np.unique(np.abs(v))) < len(v) for v in values]
        )
        special = np.flatnonzero(tie_or_zero & ~(values == 0).all(axis=1))
        pick = rng.choice(len(rows), size=min(sample, len(rows)), replace=False)
        if special.size:
            pick[0] = special[0]  # the batch's method follows its tie/zero rows, as before
        start = time.perf_counter()
        old_wilcoxon(values[pick])
        old += (time.perf_counter() - start) * len(rows) / len(pick)
        sampled += len(pick)
    return new, old, len(d), sampled


def main() -> int:
    start = time.perf_counter()
    fresh = not CACHE.is_file()
    table = merged_table()
    print(
        f"merged table: {len(table)} rows ({'built' if fresh else 'cached'}: {CACHE.relative_to(REPO)}"
        f", {time.perf_counter() - start:.0f} s); {table['learner'].nunique()} learners x "
        f"{table['policy'].nunique()} policies x {table['seed'].nunique()} seeds x "
        f"{table['fold'].nunique()} folds x {table['checkpoint'].nunique()} checkpoints"
    )
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        repeated_path = Path(tmp) / "repeated.parquet"
        repeated_seeds(table).to_parquet(repeated_path)
        read_only = in_child(CACHE, stage=False)
        print(
            f"baseline child (imports + read only): peak RSS {read_only['peak_mb']:.0f} MB, imports "
            f"{read_only['timings']['imports']:.1f} s, read {read_only['timings']['read']:.2f} s"
        )
        for label, path in (("distinct seeds", CACHE), ("seed 2 = seed 1", repeated_path)):
            res = in_child(path, stage=True)
            t = res["timings"]
            c = res["counts"]
            parts = ("read", "strip", "tests", "bias", "contrasts", "ranking_rows", "across")
            stage = sum(t[p] for p in (*parts, "within", "across8", "write"))
            print(
                f"{label}: stage {stage:.2f} s (read {t['read']:.2f}, strip {t['strip']:.2f}, "
                f"tests {t['tests']:.2f}, bias {t['bias']:.2f}, contrasts {t['contrasts']:.2f}, "
                f"rankings: rows {t['ranking_rows']:.2f}, across {t['across']:.2f}, within "
                f"{t['within']:.2f}, across 8 datasets {t['across8']:.2f}; write {t['write']:.2f}; imports "
                f"{t['imports']:.1f} s before) [target < {LIMIT_SECONDS:.0f} s]; peak RSS "
                f"{res['peak_mb']:.0f} MB [target < {LIMIT_MB:.0f} MB]; {c['strip']} strip tests "
                f"({c['exact']} exact), {c['tests']} tests, {c['bias']} bias tests, "
                f"{c['contrasts']} contrasts, {c['families']} ranking families across datasets "
                f"(1 dataset: notes), {c['within']} rows within, {c['families8']} families across 8 "
                f"datasets ({c['tested8']} tested); n in {c['n']}, "
                f"n_duplicates in {c['n_duplicates']}"
            )
            failed |= stage >= LIMIT_SECONDS or res["peak_mb"] >= LIMIT_MB
        for label, frame in (("distinct seeds", table), ("seed 2 = seed 1", repeated_seeds(table))):
            new, old, rows, sampled = baseline(frame)
            print(
                f"{label}: Wilcoxon column of the strip ({rows} rows): {new:.3f} s; scipy's wilcoxon "
                f"called as before issue 12 (method='auto', one call per batch of equal n) on the "
                f"same rows: {old:.1f} s ({sampled} rows timed, extrapolated), x{old / new:.0f}"
            )
    print("limits:", "EXCEEDED" if failed else "ok")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2], stage="--read-only" not in sys.argv)
        sys.exit(0)
    sys.exit(main())
