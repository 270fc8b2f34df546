"""Guard for refactors of the evaluation: write the outputs of a grid of ``delaycv evaluate`` runs,
then compare two such folders (the code before a change and after it) value for value.

The grid covers what the engine can do: two streams (the synthetic default and the real
``brackets`` project of ``../shared/datasets/``), two learners (Hoeffding tree, Gaussian naive
Bayes), eight label policies (ideal, delay in days and in instances, verification, HITL, HITL
with inspection errors, the general form with feedback, a zero window), four validation schemes,
the four estimators, flush, prediction noise, the trained-only evaluation, a fixed split, one
learner seed, extra checkpoints, two processes, the prediction log and the MOA export (an
observer of the loop); the HITL study's brackets runs (bootstrap, 10 folds, a checkpoint every
30 instances, ideal and the 14 HITL windows of ``config/hitl-rq1.yaml``); and a stream without
times and with categorical features (a CSV written from the synthetic stream, converted with
``time_unit: position``), run with river's Hoeffding tree and with MOA's HoeffdingTree and
NaiveBayes (their categories as nominal attributes; the Java loop in one and two threads, the
Python loop under the MOA export), so the full grid needs Java and the MOA jar.

Every run is written with ``--no-timing`` (no CPU or wall times, no peak memory or RAM-hours:
byte-reproducible tables and run.json).
``compare`` checks every table exactly (values, dtypes, column order), the MOA CSV byte for byte,
and ``run.json`` apart from what may differ between two versions of the code: timings, versions,
and new keys of the record of the run's settings (``specs``: every key the old record has must
say the same) or of ``run.json`` itself. The rows of a label reference the first folder has none
of (a reference added since, such as ``corrected``) are counted as new, not compared; every row of
the references both have must be the same.

``compare`` reads the old spelling of a renamed value as its new one, on both sides, so that a
folder written by an older checkout compares equal otherwise (:data:`RENAMED`): the sliding-window
estimator's kind, ``window`` before, ``sliding`` now, in the ``estimator`` column of the tables and
in ``run.json`` (``specs.estimator.kind``). ``write`` asks for that estimator by the name the
checkout knows (``--estimator sliding``, or ``window`` in a checkout older than the rename).

Usage::

    PYTHONPATH=OLD_CHECKOUT .venv/bin/python benchmarks/same_outputs.py write /tmp/before
    PYTHONPATH=.            .venv/bin/python benchmarks/same_outputs.py write /tmp/after
    .venv/bin/python benchmarks/same_outputs.py compare /tmp/before /tmp/after

``write --quick`` runs the first stream only (synthetic), without the study's runs and the
categorical stream's. Two folders written with and without ``DELAYCV_PURE_PYTHON=1`` differ in
the last digits of the corrected reference's rows (its kernel's numpy twin sums in another order).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import time
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "commit_guru_dataset"
BRACKETS = SHARED / "cut2years" / "0_brackets.arff"

LEARNERS = {
    "ht": ["--learner", "tree.HoeffdingTreeClassifier", "--param", "grace_period=50"],
    "nb": ["--learner", "naive_bayes.GaussianNB"],
}
POLICIES = {
    "ideal": ["--policy", "ideal"],
    "delay_7d": ["--policy", "delay", "--window", "7d"],
    "delay_200i": ["--policy", "delay", "--window", "200i"],
    "verification_30d": ["--policy", "verification", "--window", "30d"],
    "hitl_7d_90d": ["--policy", "hitl", "--pos-window", "7d", "--neg-window", "90d"],
    "hitl_insp": [
        "--policy",
        "hitl",
        "--pos-window",
        "3d",
        "--neg-window",
        "15d",
        "--inspection-error",
        "0.1",
        "--policy-name",
        "hitl_inspected",
    ],
    "general": [
        "--policy",
        "general",
        "--pos-window",
        "3d",
        "--neg-window",
        "30d",
        "--pos-expiry",
        "negative",
        "--neg-expiry",
        "truth",
        "--feedback",
        "--policy-name",
        "general_fb",
    ],
    "delay_0": ["--policy", "delay", "--window", "0", "--policy-name", "delay_zero"],
}
SCHEMES = ["bootstrap", "cv", "prequential", "split"]


def _sliding_kind() -> str:
    """The sliding-window estimator's kind as the checkout being run names it."""
    try:
        from delaycv.common.choices import ESTIMATORS as KINDS
    except ImportError:  # a checkout older than delaycv.common
        return "window"
    return "sliding" if "sliding" in KINDS else "window"


ESTIMATORS = [
    ["--estimator", "fading", "--alpha", "0.99"],
    ["--estimator", _sliding_kind(), "--width", "300"],
    ["--estimator", "cumulative"],
    ["--estimator", "tumbling", "--size", "250"],
]


def grid(streams: dict[str, Path]) -> list[tuple[str, list[str]]]:
    """(run name, evaluate arguments without --out) for every run of the guard."""
    runs = []
    i = 0
    for s_name, path in streams.items():
        for l_name, learner in LEARNERS.items():
            for p_name, policy in POLICIES.items():
                scheme = SCHEMES[i % len(SCHEMES)]
                args = [str(path), *learner, *policy, "--validation", scheme]
                if scheme != "prequential":
                    args += ["--folds", "3"]
                args += ESTIMATORS[(i // 2) % len(ESTIMATORS)]
                args += ["--every", "250", "--predictions", "--moa-csv", "--seed", str(1 + i % 3)]
                if i % 3 == 0:
                    args.append("--flush")
                if i % 2 == 1:
                    args += ["--noise", "0.1"]
                if i % 5 == 2 and scheme == "bootstrap":
                    args += ["--evaluate", "trained"]
                if i % 7 == 3:
                    args += ["--checkpoint-fraction", "0.33", "0.5"]
                if i % 11 == 4:
                    args += ["--fixed-split", "--same-learner-seed"]
                if i % 6 == 5 and scheme != "prequential":
                    args += ["--jobs", "2"]
                runs.append((f"{s_name}-{l_name}-{p_name}", args))
                i += 1
    return runs


def study_runs(brackets: Path) -> list[tuple[str, list[str]]]:
    """The HITL study's RQ1 runs on brackets (config/hitl-rq1.yaml's settings)."""
    common = [
        "--learner",
        "tree.HoeffdingTreeClassifier",
        "--validation",
        "bootstrap",
        "--folds",
        "10",
        "--estimator",
        "fading",
        "--alpha",
        "0.99",
        "--every",
        "30",
    ]
    runs = [("study-brackets-ideal", [str(brackets), *common, "--policy", "ideal"])]
    for pos in ("1d", "3d", "7d", "15d", "30d", "60d", "90d"):
        for neg in ("15d", "90d"):
            runs.append(
                (
                    f"study-brackets-hitl_{pos}_{neg}",
                    [
                        str(brackets),
                        *common,
                        "--policy",
                        "hitl",
                        "--pos-window",
                        pos,
                        "--neg-window",
                        neg,
                    ],
                )
            )
    return runs


#: the categorical stream's runs: (name, learner arguments, more arguments)
CATEGORICAL_RUNS = [
    ("categorical-ht", LEARNERS["ht"], ["--validation", "cv", "--folds", "3"]),
    ("categorical-moa_ht", ["--learner", "moa:trees.HoeffdingTree -g 50"], ["--jobs", "2"]),
    ("categorical-moa_nb", ["--learner", "moa:bayes.NaiveBayes"], ["--moa-csv"]),
]


def categorical_stream(out: Path) -> Path:
    """The synthetic stream's rows as a CSV without times and with two categorical features
    (``component``, a tenth missing, and ``kind``, both from its numbers), converted as a
    stream whose times are its positions, with the effort la + ld; its path."""
    import numpy as np

    from delaycv.data.convert import convert_file
    from delaycv.data.synthetic import generate_stream

    stream = generate_stream(rows=3000, seed=11)
    frame = stream.features[["la", "ld", "nf", "entropy", "exp"]].copy()
    component = np.array(["core", "ui", "docs", "build"])[(frame["la"].to_numpy() % 4).astype(int)]
    frame["component"] = np.where(np.arange(len(frame)) % 10 == 3, "", component)
    frame["kind"] = np.where(frame["ld"].to_numpy() > frame["la"].to_numpy(), "fix", "feature")
    frame["buggy"] = stream.label
    csv = out / "categorical.csv"
    frame.to_csv(csv, index=False)
    mapping = {
        "label": "buggy",
        "positive": "1",
        "time_unit": "position",
        "categorical": ["component", "kind"],
        "effort": ["la", "ld"],
    }
    path = out / "categorical.parquet"
    convert_file(csv, path, mapping=mapping)
    return path


def categorical_runs(path: Path) -> list[tuple[str, list[str]]]:
    """The categorical stream's runs (:data:`CATEGORICAL_RUNS`): a delay of 100 instances."""
    common = ["--policy", "delay", "--window", "100i", "--every", "250", "--predictions"]
    return [
        (name, [str(path), *learner, *common, *more]) for name, learner, more in CATEGORICAL_RUNS
    ]


def write(out: Path, quick: bool) -> int:
    from delaycv.cli import main
    from delaycv.data.convert import convert_file
    from delaycv.data.stream_file import write_stream
    from delaycv.data.synthetic import generate_stream

    out.mkdir(parents=True, exist_ok=True)
    streams = {"synthetic": out / "synthetic.parquet"}
    write_stream(generate_stream(rows=3000, seed=7), streams["synthetic"])
    runs = []
    if not quick:
        if not BRACKETS.is_file():
            print(f"same_outputs: {BRACKETS} not found (use --quick)", file=sys.stderr)
            return 2
        streams["brackets"] = out / "brackets.parquet"
        convert_file(BRACKETS, streams["brackets"], preset="commit-guru")
        runs += study_runs(streams["brackets"])
        runs += categorical_runs(categorical_stream(out))
    runs = grid(streams) + runs
    t0 = time.monotonic()
    for name, args in runs:
        argv = ["evaluate", *args, "--out", str(out / name), "--no-timing", "--quiet"]
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            status = main(argv)
        if status != 0:
            print(f"{name}: exit {status}: {err.getvalue().strip()}", file=sys.stderr)
            return 1
    print(f"same_outputs: {len(runs)} runs -> {out} in {time.monotonic() - t0:.0f} s")
    return 0


#: run.json keys that may differ between two versions of the same computation.
#: (``--no-timing`` writes none of the timings nor the process's cost, delaycv.tables.usage; listed in
#: case a folder was written without it)
VOLATILE = {
    "versions",
    "loops",  # (which loops ran: the machine's build, DELAYCV_PURE_PYTHON)
    "wall_seconds",
    "cpu_seconds",
    "process_wall_seconds",
    "process_cpu_seconds",
    "peak_rss_bytes",
    "ram_hours",
    "settings",
    "code",
    "created",
    "path",
}


#: renamed values: (where, old spelling, new spelling); ``compare`` reads the old as the new.
#: ``estimator``: the column of the tables and the kind of run.json's ``specs.estimator``.
RENAMED = [("estimator", "window", "sliding")]


def _renamed_frame(frame):
    """``frame`` with the old spellings of :data:`RENAMED` in its columns written the new way."""
    for column, old, new in RENAMED:
        if column in frame.columns and (frame[column] == old).any():
            frame = frame.assign(**{column: frame[column].replace(old, new)})
    return frame


def _renamed_specs(specs: dict) -> dict:
    """run.json's ``specs`` with the old spellings of :data:`RENAMED` written the new way."""
    for key, old, new in RENAMED:
        spec = specs.get(key)
        if isinstance(spec, dict) and spec.get("kind") == old:
            specs = {**specs, key: {**spec, "kind": new}}
    return specs


def _stable(info):
    if isinstance(info, dict):
        return {k: _stable(v) for k, v in info.items() if k not in VOLATILE}
    if isinstance(info, list):
        return [_stable(v) for v in info]
    return info


def compare(a: Path, b: Path) -> int:
    import pandas as pd

    runs = sorted(p.name for p in a.iterdir() if p.is_dir())
    other = sorted(p.name for p in b.iterdir() if p.is_dir())
    if runs != other:
        print(f"different runs: {sorted(set(runs) ^ set(other))}")
        return 1
    bad = 0
    files = 0
    new_rows = 0
    new_keys: set = set()
    for run in runs:
        names = sorted(p.name for p in (a / run).iterdir())
        if names != sorted(p.name for p in (b / run).iterdir()):
            print(f"{run}: different files")
            bad += 1
            continue
        for name in names:
            pa, pb = a / run / name, b / run / name
            files += 1
            if name.endswith(".parquet"):
                fa = _renamed_frame(pd.read_parquet(pa))
                fb = _renamed_frame(pd.read_parquet(pb))
                fb, added = _old_references(fa, fb)
                new_rows += added
                try:
                    pd.testing.assert_frame_equal(fa, fb, check_exact=True)
                except AssertionError as err:
                    print(f"{run}/{name}: {str(err).splitlines()[0:3]}")
                    bad += 1
            elif name == "run.json":
                ja = _stable(json.loads(pa.read_text()))
                jb = _stable(json.loads(pb.read_text()))
                # the record of the settings may grow: what the old one said, the new one says
                sa = _renamed_specs(ja.pop("specs", {}))
                sb = _renamed_specs(jb.pop("specs", {}))
                if any(sb.get(k, KeyError) != v for k, v in sa.items()):
                    print(
                        f"{run}/run.json: specs differ: {sorted(k for k in sa if sb.get(k) != sa[k])}"
                    )
                    bad += 1
                elif any(jb.get(k, KeyError) != v for k, v in ja.items()):
                    keys = sorted(k for k in ja if jb.get(k, KeyError) != ja[k])
                    print(f"{run}/run.json: keys differ: {keys}")
                    bad += 1
                new_keys.update(set(jb) - set(ja))
            elif pa.read_bytes() != pb.read_bytes():
                print(f"{run}/{name}: bytes differ")
                bad += 1
    if new_rows or new_keys:
        print(
            f"same_outputs: new in the second: {new_rows} rows of new references, "
            f"run.json keys {sorted(new_keys)} (not differences)"
        )
    print(f"same_outputs: {len(runs)} runs, {files} files compared, {bad} different")
    return 1 if bad else 0


def _old_references(fa, fb):
    """``fb`` without the rows of label references that ``fa`` has none of (a reference added
    since: its rows are new, not different), and how many rows that drops."""
    if "reference" not in fa.columns or "reference" not in fb.columns:
        return fb, 0
    old = fb["reference"].isin(set(fa["reference"]))
    if old.all():
        return fb, 0
    return fb[old].reset_index(drop=True), int((~old).sum())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write")
    w.add_argument("out", type=Path)
    w.add_argument("--quick", action="store_true")
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = parser.parse_args(argv)
    if args.command == "write":
        return write(args.out, args.quick)
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
