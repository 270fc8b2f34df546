"""``delaycv generate DEST.parquet``: write the embedded default (synthetic) stream (the workflow's
convert stage of a generated dataset, :func:`delaycv.stages.convert.convert`)."""

from __future__ import annotations

import argparse
import json
import sys

from delaycv.cli import options


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "generate",
        help="write the seeded synthetic default stream",
        description=(
            "Write the embedded default stream (commit-like arrivals, ~30 % positives, delayed "
            "fix events, one concept drift, 13 numeric features) as a Parquet stream. The same "
            "arguments always give a byte-identical file."
        ),
    )
    parser.add_argument("dest", help="the Parquet file to write (written atomically)")
    parser.add_argument("--rows", type=int, default=6000, help="number of instances (6000)")
    parser.add_argument("--seed", type=options.seed, default=1, help="random seed (1)")
    parser.add_argument("--dataset", default="synthetic", help="dataset name (synthetic)")
    parser.add_argument(
        "--no-effort",
        action="store_true",
        help="a stream without an effort (default: la + ld, for the effort-aware measures)",
    )
    options.add_summary_options(parser)
    parser.set_defaults(run=run)
    return parser


def run(args) -> int:
    from delaycv.cli import check_number
    from delaycv.cli.convert import check_parquet_name, summary_line
    from delaycv.common.atomic import check_output
    from delaycv.common.bounds import check_size

    check_number(args.rows, "--rows", low=1, expected="N >= 1")
    check_size("rows", args.rows, "option --rows")
    check_parquet_name(args.dest)
    check_output(args.dest)
    # the options are checked: now the modules of the stream (numpy, pandas, pyarrow)
    from delaycv.stages.convert import convert

    spec = {"generate": {"rows": args.rows, "seed": args.seed}}
    meta = convert(
        spec | ({"effort": None} if args.no_effort else {}), args.dest, dataset=args.dataset
    )
    if args.json:
        keys = ("dataset", "rows", "positives", "positives_with_label_time")
        print(json.dumps({k: meta[k] for k in keys}), file=sys.stdout)
    elif not args.quiet:
        print(summary_line(meta, args.dest), file=sys.stdout)
    return 0
