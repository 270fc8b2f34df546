"""``delaycv rank MERGED.parquet ... --out DIR``: rank learners and policies across datasets and
within each dataset (the workflow's rankings stage, :func:`delaycv.stages.rankings.rankings`).

The merged per-fold tables are those of the datasets (one each, as ``delaycv merge`` or the
workflow's ``merge`` rule writes them). Ranks the learners within each policy and the policies
within each learner, and writes into --out, each file atomically: across datasets
``friedman.parquet``/``.csv`` (Friedman mean ranks, statistic, its chi-square and permutation
p-values, critical difference),
``nemenyi.csv`` (the Nemenyi p-value of every pair), ``scott_knott.parquet``/``.csv`` (Scott-Knott
ESD groups) and ``rankings.html``; within each dataset over its (seed, fold) pairs
``within.parquet``/``.csv`` and ``within.html``; and ``figures/`` (critical-difference diagrams
and Scott-Knott ESD box plots). Families with fewer than 3 datasets carry a note instead of a
test. The options are those of the workflow's config: ``tests`` (metrics, references,
checkpoints, alpha; resamples and seed, of Friedman's permutation p-value),
``rankings.version`` and ``figures`` (metric, reference, formats, dpi), with its defaults
(``delaycv.common.defaults``): without options it writes what the workflow's rankings stage
writes with the default config.
"""

from __future__ import annotations

import argparse
import sys

from delaycv.cli import description, options
from delaycv.common import defaults
from delaycv.common.choices import FIGURE_FORMATS, RANKING_VERSIONS, REFERENCES
from delaycv.common.errors import ConfigError

#: The option that sets each key of :class:`~delaycv.stats.settings.RankingSettings` (its errors
#: name the option).
OPTIONS = {
    "tests.metrics": "--metric",
    "tests.references": "--reference",
    "tests.checkpoints": "--checkpoint",
    "tests.checkpoints.positions": "--checkpoint-position",
    "tests.checkpoints.fractions": "--checkpoint-fraction",
    "tests.alpha": "--alpha",
    "tests.resamples": "--resamples",
    "tests.seed": "--seed",
    "rankings.version": "--version",
    "figures.metric": "--figure-metric",
    "figures.reference": "--figure-reference",
    "figures.formats": "--format",
    "figures.dpi": "--dpi",
}


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "rank",
        help="rank learners and policies across datasets (Friedman/Nemenyi, Scott-Knott ESD)",
        description=description(__doc__),
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
        help=f"metric to rank (repeat; {' '.join(defaults.TEST_METRICS)}: tests.metrics)",
    )
    parser.add_argument(
        "--reference",
        action="append",
        dest="references",
        choices=REFERENCES,
        help="labels to score against (repeat; all three: tests.references)",
    )
    options.add_checkpoint_options(parser, "ranked")
    parser.add_argument(
        "--alpha", type=float, help=f"significance level ({defaults.SIGNIFICANCE}: tests.alpha)"
    )
    parser.add_argument(
        "--resamples",
        type=int,
        help="random permutations R of Friedman's permutation p-value, exact when there are at "
        f"most R ({defaults.RESAMPLES}: tests.resamples)",
    )
    parser.add_argument(
        "--seed",
        type=options.seed,
        help=f"seed of the random permutations ({defaults.TEST_SEED}: tests.seed)",
    )
    parser.add_argument(
        "--version",
        choices=RANKING_VERSIONS,
        help="Scott-Knott ESD's version: np (non-parametric) or p (parametric) "
        f"({defaults.RANKING_VERSION}: rankings.version)",
    )
    _figure_options(parser)
    parser.add_argument(
        "--quiet", action="store_true", help="no progress on stderr, no summary on stdout"
    )
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
        choices=REFERENCES,
        help=f"labels of the figures ({defaults.FIGURE_REFERENCE}: figures.reference)",
    )
    parser.add_argument(
        "--format",
        nargs="+",
        choices=FIGURE_FORMATS,
        help=f"({' '.join(defaults.FORMATS)}: figures.formats)",
    )
    parser.add_argument(
        "--dpi",
        type=int,
        help=f"resolution of the PNG files ({defaults.DPI}: figures.dpi)",
    )


def settings_from(args):
    """The :class:`~delaycv.stats.settings.RankingSettings` of the options (those not given: the
    defaults), every value checked by :func:`~delaycv.stats.settings.make_ranking_settings`."""
    from delaycv.stats.settings import make_ranking_settings

    return make_ranking_settings(
        **options.given(
            metrics=args.metrics,
            references=args.references,
            checkpoints=options.checkpoint_request(args),
            alpha=args.alpha,
            resamples=args.resamples,
            seed=args.seed,
            version=args.version,
            figure_metrics=args.figure_metrics,
            figure_reference=args.figure_reference,
            formats=args.format,
            dpi=args.dpi,
        )
    )


def run(args) -> int:
    try:
        return _run(args)
    except ConfigError as err:
        raise options.on_the_command_line(err, OPTIONS) from None


def _run(args) -> int:
    from delaycv.common.atomic import check_output

    settings = settings_from(args)
    out = check_output(args.out, directory=True)
    from delaycv.metrics.properties import require_direction

    for option, metrics in (("--metric", args.metrics), ("--figure-metric", args.figure_metrics)):
        for metric in metrics or []:  # before any table is read
            require_direction(metric, location=f"option {option}")
    # the options are checked: now the modules of the rankings (numpy, pandas, scipy, matplotlib)
    from delaycv.stages.rankings import rankings
    from delaycv.tables.results import read_table

    present = [c for p in args.merged for c in read_table(p, ["checkpoint"])["checkpoint"].unique()]
    options.check_checkpoints_in_table(
        settings.checkpoints, present, " ".join(map(str, args.merged))
    )
    result = rankings(
        args.merged,
        out,
        settings,
        progress=None if args.quiet else (lambda m: print(f"delaycv: {m}", file=sys.stderr)),
    )
    for note in result.notes():
        print(f"delaycv: note: {note}", file=sys.stderr)
    if not args.quiet:
        print(f"{result.summary()} -> {out}", file=sys.stdout)
    return 0
