"""``delaycv merge``: concatenate the per-fold tables of run directories into one tidy table (the
workflow's merge stage, :func:`delaycv.stages.merge.merge`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from delaycv.common.errors import InputError

#: Output formats by file suffix.
FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv"}


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "merge",
        help="concatenate folds.parquet of run directories",
        description="Concatenate the folds.parquet tables of run directories (or the Parquet "
        "files themselves) into one table with the same columns, in the order given. The "
        "output's suffix chooses its format: .parquet or .csv.",
    )
    p.add_argument("runs", nargs="+", metavar="DIR", help="run directories or folds.parquet files")
    p.add_argument(
        "--out", required=True, metavar="X.parquet", help="merged table to write (.parquet, .csv)"
    )
    p.add_argument(
        "--summary-out", metavar="Y.parquet", help="also concatenate summary.parquet into Y"
    )
    p.add_argument(
        "--runs-out",
        metavar="R.parquet",
        help="also write the table of the runs (one row per run, from its run.json: wall and "
        "CPU seconds, peak memory, RAM-hours) to R (.parquet, .csv)",
    )
    p.add_argument("--quiet", action="store_true", help="print no summary")
    p.set_defaults(run=run)
    return p


def output_format(path: str, option: str) -> str:
    """``parquet`` or ``csv`` from the suffix of ``path``; any other suffix is refused."""
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise InputError(
            f"unknown output format {Path(path).suffix or '(no suffix)'!r}",
            path=path,
            location=f"option {option}",
            expected="a file name ending in .parquet or .csv",
        )
    return fmt


def run(args) -> int:
    from delaycv.common.atomic import check_output

    outputs = [
        (args.out, "--out"),
        (args.summary_out, "--summary-out"),
        (args.runs_out, "--runs-out"),
    ]
    outputs = [(path, option) for path, option in outputs if path]
    for path, option in outputs:
        output_format(path, option)
    for path, _ in outputs:
        check_output(path)
    # the options are checked: now the tables' modules (numpy, pandas, pyarrow)
    from delaycv.stages.merge import merge

    merged = merge(
        args.runs, args.out, summary=args.summary_out or None, runs_out=args.runs_out or None
    )
    if not args.quiet:
        print(f"delaycv: {len(args.runs)} runs, {merged.rows} rows -> {args.out}", file=sys.stdout)
    return 0
