"""``delaycv merge``: concatenate the per-fold tables of run directories into one tidy table."""

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


def write(frame, path: str, fmt: str) -> None:
    from delaycv.common.atomic import atomic_path
    from delaycv.tables.results import write_table

    if fmt == "parquet":
        write_table(frame, path)
    else:
        with atomic_path(path) as tmp:
            frame.to_csv(tmp, index=False)


def run(args) -> int:
    from delaycv.common.atomic import check_output

    outputs = [(args.out, output_format(args.out, "--out"))]
    if args.summary_out:
        outputs.append((args.summary_out, output_format(args.summary_out, "--summary-out")))
    if args.runs_out:
        outputs.append((args.runs_out, output_format(args.runs_out, "--runs-out")))
    for path, _ in outputs:
        check_output(path)
    # the options are checked: now the tables' modules (numpy, pandas, pyarrow)
    from delaycv.tables.results import FOLDS_FILE, SUMMARY_FILE, merge_tables

    tables = [merge_tables(args.runs, name=FOLDS_FILE)]
    if args.summary_out:
        tables.append(merge_tables(args.runs, name=SUMMARY_FILE))
    if args.runs_out:
        from delaycv.tables.costs import runs_table

        tables.append(runs_table(args.runs))
    for (path, fmt), table in zip(outputs, tables, strict=True):
        write(table, path, fmt)
    if not args.quiet:
        print(
            f"delaycv: {len(args.runs)} runs, {len(tables[0])} rows -> {args.out}", file=sys.stdout
        )
    return 0
