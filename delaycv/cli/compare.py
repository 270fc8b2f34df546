"""``delaycv compare MERGED.parquet --out DIR``: pairwise learner tests of a merged per-fold table.

Writes, each file atomically and only after every test has been computed:

* ``tests.parquet`` + ``tests.csv``: pairwise permutation tests at ``--checkpoint`` (default the last
  checkpoint of each dataset), Holm-adjusted, with mean difference, 95 % CI, Cliff's delta, and the
  Wilcoxon and sign-test p-values; ``n`` distinct (seed, fold) pairs, ``n_duplicates`` left out as
  repeats of another seed (columns: ``delaycv.stats.learner_tests.TEST_COLUMNS``);
* ``strip.parquet``: the same tests at every checkpoint (the significance strip of the figures);
* ``bias.parquet`` + ``bias.csv`` (when both references are present): observed minus true per
  learner at the last checkpoint, tested against zero;
* ``mcnemar.parquet`` + ``mcnemar.csv`` (with ``--predictions RUN_DIR ...``): McNemar's test per
  fold for every learner pair of the same (dataset, policy, seed), from the prediction logs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from delaycv.cli import options
from delaycv.common.choices import ALTERNATIVES, REFERENCES
from delaycv.common.errors import InputError

if TYPE_CHECKING:  # the tests' modules are imported when the command runs: --help stays fast
    import pandas as pd


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "compare",
        help="pairwise permutation tests of learners on a merged per-fold table",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("merged", help="merged per-fold checkpoint table (Parquet)")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument(
        "--metric",
        action="append",
        dest="metrics",
        metavar="M",
        help="metric to test (repeat; gmean)",
    )
    parser.add_argument(
        "--reference",
        action="append",
        dest="references",
        choices=REFERENCES,
        help="labels to score against (repeat; both)",
    )
    parser.add_argument(
        "--checkpoint", default="last", help="'last' (default), 'all', or a stream position"
    )
    parser.add_argument("--resamples", type=int, default=5000, help="random sign flips R (5000)")
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    parser.add_argument("--seed", type=options.seed, default=1, help="seed of the sign flips (1)")
    parser.add_argument(
        "--alternative", default="two-sided", choices=ALTERNATIVES, help="(two-sided)"
    )
    parser.add_argument(
        "--predictions",
        nargs="+",
        metavar="RUN_DIR",
        help="run directories with predictions.parquet (and folds.parquet) for McNemar's test",
    )
    parser.add_argument(
        "--mcnemar-method", default="exact", choices=("exact", "chi2"), help="(exact)"
    )
    parser.set_defaults(run=run)
    return parser


def _checkpoints(text: str):
    if text in ("last", "all"):
        return text
    try:
        return [int(text)]
    except ValueError:
        raise InputError(
            f"checkpoint {text!r} is not valid",
            location="option --checkpoint",
            expected="'last', 'all' or an integer stream position",
        ) from None


def mcnemar_from_runs(run_dirs, *, references, method, alpha) -> pd.DataFrame:
    """McNemar's tests for the learner pairs of each (dataset, policy, seed) among run directories."""
    import pandas as pd

    from delaycv.stats.mcnemar import mcnemar_tests
    from delaycv.tables.results import read_table

    groups: dict[tuple, dict[str, pd.DataFrame]] = {}
    for run_dir in map(Path, run_dirs):
        keys = read_table(run_dir / "folds.parquet", ["dataset", "learner", "seed", "policy"])
        if keys.empty:
            raise InputError("empty table", path=str(run_dir / "folds.parquet"), expected="rows")
        first = keys.iloc[0]
        log = read_table(run_dir / "predictions.parquet")
        group = groups.setdefault((first["dataset"], first["policy"], int(first["seed"])), {})
        if first["learner"] in group:
            raise InputError(
                f"learner {first['learner']!r} given twice for one (dataset, policy, seed)",
                path=str(run_dir),
                expected="one run directory per learner",
            )
        group[first["learner"]] = log
    frames = []
    for (dataset, policy, seed), logs in sorted(groups.items()):
        for reference in references:
            res = mcnemar_tests(logs, reference=reference, method=method, alpha=alpha)
            res.insert(0, "seed", seed)
            res.insert(0, "policy", policy)
            res.insert(0, "dataset", dataset)
            frames.append(res)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _check_checkpoints(table: pd.DataFrame, checkpoints, path: str) -> None:
    """Positions given with --checkpoint must be checkpoints of the table (else no test at all)."""
    if isinstance(checkpoints, str):
        return
    present = set(table["checkpoint"].unique().tolist())
    missing = [c for c in checkpoints if c not in present]
    if missing:
        shown = sorted(present)
        listed = ", ".join(map(str, shown[:8])) + (", ..." if len(shown) > 8 else "")
        raise InputError(
            f"checkpoint {missing[0]} is not in the table",
            path=path,
            location="option --checkpoint",
            expected=f"one of its checkpoints ({listed}), 'last' or 'all'",
        )


def run(args) -> int:
    from delaycv.cli import check_number
    from delaycv.common.atomic import atomic_path, check_output

    checkpoints = _checkpoints(args.checkpoint)
    check_number(args.resamples, "--resamples", low=1, expected="R >= 1")
    check_number(args.alpha, "--alpha", low=0, high=1, open_low=True, open_high=True)
    out = check_output(args.out, directory=True)
    # the options are checked: now the modules of the tests (numpy, pandas, scipy)
    from delaycv.stats.bias import bias_tests
    from delaycv.stats.checkpoints import untested_notes
    from delaycv.stats.learner_tests import run_tests
    from delaycv.tables.results import read_table

    table = read_table(args.merged)
    _check_checkpoints(table, checkpoints, str(args.merged))
    metrics = args.metrics or ["gmean"]
    references = args.references or list(REFERENCES)
    common = dict(
        metrics=metrics,
        references=references,
        resamples=args.resamples,
        alpha=args.alpha,
        seed=args.seed,
        alternative=args.alternative,
    )
    outputs: dict[str, pd.DataFrame] = {}
    strip = run_tests(table, checkpoints="all", **common)
    outputs["tests"] = (
        strip if checkpoints == "all" else run_tests(table, checkpoints=checkpoints, **common)
    )
    outputs["strip"] = strip
    if {"observed", "true"} <= set(table["reference"].unique()):
        outputs["bias"] = bias_tests(
            table, metrics=metrics, resamples=args.resamples, seed=args.seed
        )
    if args.predictions:
        outputs["mcnemar"] = mcnemar_from_runs(
            args.predictions, references=references, method=args.mcnemar_method, alpha=args.alpha
        )
    for name, frame in outputs.items():
        with atomic_path(out / f"{name}.parquet") as tmp:
            frame.to_parquet(tmp, index=False, write_page_checksum=True)
        if name != "strip":
            with atomic_path(out / f"{name}.csv") as tmp:
                frame.to_csv(tmp, index=False)
    tests = outputs["tests"]
    # a test with no value is a row with a note, and said here
    for name, label in (("tests", "learner tests"), ("bias", "bias tests")):
        for note, count in untested_notes(outputs.get(name, tests.iloc[:0])):
            print(f"delaycv: note: {label} ({count}): {note}", file=sys.stderr)
    print(
        f"{len(tests)} tests ({int(tests['significant'].sum())} significant after Holm at "
        f"alpha={args.alpha}), {len(strip)} strip tests -> {out}",
        file=sys.stdout,
    )
    return 0
