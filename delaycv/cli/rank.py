"""``delaycv rank MERGED.parquet ... --out DIR``: rank learners and policies across datasets and
within each dataset (the workflow's rankings stage, :func:`delaycv.stages.rankings.rankings`).

The merged per-fold tables are those of the datasets (one each, as ``delaycv merge`` or the
workflow's ``merge`` rule writes them). Ranks the learners within each policy and the policies
within each learner, and writes into --out, each file atomically: across datasets
``friedman.parquet``/``.csv`` (Friedman mean ranks, statistic, p, critical difference),
``nemenyi.csv`` (the Nemenyi p-value of every pair), ``scott_knott.parquet``/``.csv`` (Scott-Knott
ESD groups) and ``rankings.html``; within each dataset over its (seed, fold) pairs
``within.parquet``/``.csv`` and ``within.html``; and ``figures/`` (critical-difference diagrams
and Scott-Knott ESD box plots). Families with fewer than 3 datasets carry a note instead of a
test. The options are those of the workflow's config: ``tests`` (metrics, references,
checkpoints, alpha), ``rankings.version`` and ``figures`` (metric, reference, formats, dpi).
"""

from __future__ import annotations

import argparse
import logging
import sys

from delaycv.cli import options
from delaycv.common.choices import FIGURE_FORMATS, REFERENCES


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "rank",
        help="rank learners and policies across datasets (Friedman/Nemenyi, Scott-Knott ESD)",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "merged", nargs="+", metavar="MERGED", help="merged per-fold tables, one per dataset"
    )
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument(
        "--metric",
        action="append",
        dest="metrics",
        metavar="M",
        help="metric to rank (repeat; gmean; the config's tests.metrics)",
    )
    parser.add_argument(
        "--reference",
        action="append",
        dest="references",
        choices=REFERENCES,
        help="labels to score against (repeat; all three; tests.references)",
    )
    options.add_checkpoint_options(parser, "ranked")
    parser.add_argument(
        "--alpha", type=float, default=0.05, help="significance level (0.05; tests.alpha)"
    )
    parser.add_argument(
        "--version",
        default="np",
        choices=("np", "p"),
        help="Scott-Knott ESD's version: np (non-parametric) or p (parametric) (np; "
        "rankings.version)",
    )
    _figure_options(parser)
    parser.add_argument("--quiet", action="store_true", help="print no progress")
    parser.set_defaults(run=run)
    return parser


def _figure_options(parser) -> None:
    """The figures' metrics, labels, formats and resolution (the config's ``figures``)."""
    parser.add_argument(
        "--figure-metric",
        action="append",
        dest="figure_metrics",
        metavar="M",
        help="metric of the figures (repeat; default: the ranked metrics; figures.metric)",
    )
    parser.add_argument(
        "--figure-reference",
        default="observed",
        choices=REFERENCES,
        help="labels of the figures (observed; figures.reference)",
    )
    parser.add_argument(
        "--format", nargs="+", default=list(FIGURE_FORMATS), help="(png pdf; figures.formats)"
    )
    parser.add_argument(
        "--dpi", type=int, default=200, help="resolution of the PNG files (200; figures.dpi)"
    )


def run(args) -> int:
    logging.basicConfig(level=logging.WARNING, format="delaycv: warning: %(message)s")
    from delaycv.cli import check_number
    from delaycv.common.atomic import check_output

    checkpoints = options.checkpoint_request(args)
    check_number(args.alpha, "--alpha", low=0, high=1, open_low=True, open_high=True)
    check_number(args.dpi, "--dpi", low=1)
    out = check_output(args.out, directory=True)
    # the options are checked: now the modules of the rankings (numpy, pandas, scipy, matplotlib)
    from delaycv.stages.rankings import rankings
    from delaycv.tables.results import read_table

    present = [c for p in args.merged for c in read_table(p, ["checkpoint"])["checkpoint"].unique()]
    options.check_checkpoints_in_table(checkpoints, present, " ".join(map(str, args.merged)))

    metrics = args.metrics or ["gmean"]
    result = rankings(
        args.merged,
        out,
        metrics=metrics,
        references=args.references or list(REFERENCES),
        checkpoints=checkpoints,
        alpha=args.alpha,
        version=args.version,
        figure_metrics=args.figure_metrics or metrics,
        figure_reference=args.figure_reference,
        formats=args.format,
        dpi=args.dpi,
        progress=None if args.quiet else (lambda m: print(f"delaycv: {m}", file=sys.stderr)),
    )
    print(
        f"{len(result.across.families())} families across datasets, {len(result.within)} rows "
        f"within datasets, {len(result.figures)} figure files -> {out}",
        file=sys.stdout,
    )
    return 0
