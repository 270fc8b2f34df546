"""``delaycv merge``: concatenate the per-fold tables of run directories into one tidy table."""

from __future__ import annotations

import argparse


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "merge",
        help="concatenate folds.parquet of run directories",
        description="Concatenate the folds.parquet tables of run directories (or the Parquet "
        "files themselves) into one table with the same columns, in the order given.",
    )
    p.add_argument("runs", nargs="+", metavar="DIR", help="run directories or folds.parquet files")
    p.add_argument("--out", required=True, metavar="X.parquet", help="merged table to write")
    p.add_argument(
        "--summary-out", metavar="Y.parquet", help="also concatenate summary.parquet into Y"
    )
    p.set_defaults(run=run)
    return p


def run(args) -> int:
    from delaycv.results import SUMMARY_FILE, merge_runs, merge_tables, write_table

    summary = None
    if args.summary_out:
        summary = merge_tables(args.runs, name=SUMMARY_FILE)
    merge_runs(args.runs, args.out)
    if summary is not None:
        write_table(summary, args.summary_out)
    return 0
