"""``delaycv compare MERGED.parquet --out DIR``: what the workflow's compare stage does
(:func:`delaycv.stages.compare.compare`), on one merged per-fold table.

Writes into --out, each file atomically and only after every test has been computed:

* ``tests.parquet`` + ``tests.csv`` + ``tests.html``: pairwise permutation tests at the checkpoints
  (default the last checkpoint of each dataset), Holm-adjusted, with mean difference, 95 % CI,
  Cliff's delta, and the Wilcoxon and sign-test p-values; ``n`` distinct (seed, fold) pairs,
  ``n_duplicates`` left out as repeats of another seed (columns:
  ``delaycv.stats.learner_tests.TEST_COLUMNS``);
* ``strip.parquet``: the same tests at every checkpoint (the significance strip of the figures);
* ``bias.parquet`` + ``bias.csv`` + ``bias.html`` (when both references are present): observed
  minus true per learner at the same checkpoints, tested against zero;
* ``contrasts.parquet`` + ``contrasts.csv`` + ``contrasts.html`` (when the table has a policy
  named ideal, or with ``--contrasts-reference POLICY``; none with ``--no-contrasts``): every
  policy against that policy, at the same checkpoints;
* ``mcnemar.parquet`` + ``mcnemar.csv`` (with ``--predictions RUN_DIR ...``): McNemar's test per
  fold for every learner pair of the same (dataset, policy, seed), from the prediction logs,
  against the requested references of 0/1 labels (observed, true; not corrected).

The checkpoints: ``--checkpoint`` (``last``, ``all`` or a checkpoint of the table), or positions
and fractions of each stream (``--checkpoint-position``, ``--checkpoint-fraction``: the config's
``tests.checkpoints``), each answered by the first checkpoint at or after it.

Without options it writes what the workflow's compare stage writes with the default config: the
defaults are those of ``delaycv.common.defaults``, which the config schema repeats.
"""

from __future__ import annotations

import argparse
import sys

from delaycv.cli import description, options
from delaycv.common import defaults
from delaycv.common.choices import ALTERNATIVES, MCNEMAR_METHODS, REFERENCES
from delaycv.common.errors import ConfigError

#: The option that sets each key of :class:`~delaycv.stats.settings.CompareSettings` (its errors
#: name the option).
OPTIONS = {
    "tests.metrics": "--metric",
    "tests.references": "--reference",
    "tests.checkpoints": "--checkpoint",
    "tests.checkpoints.positions": "--checkpoint-position",
    "tests.checkpoints.fractions": "--checkpoint-fraction",
    "tests.resamples": "--resamples",
    "tests.alpha": "--alpha",
    "tests.seed": "--seed",
    "alternative": "--alternative",
    "contrasts.reference": "--contrasts-reference",
    "mcnemar_method": "--mcnemar-method",
}


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "compare",
        help="pairwise permutation tests of learners on a merged per-fold table",
        description=description(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("merged", help="merged per-fold checkpoint table (Parquet)")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument(
        "--metric",
        action="append",
        dest="metrics",
        metavar="M",
        help=f"metric to test (repeat; {' '.join(defaults.TEST_METRICS)}: tests.metrics)",
    )
    parser.add_argument(
        "--reference",
        action="append",
        dest="references",
        choices=REFERENCES,
        help="labels to score against (repeat; all three: tests.references)",
    )
    options.add_checkpoint_options(parser, "tested")
    contrasts = parser.add_mutually_exclusive_group()
    contrasts.add_argument(
        "--contrasts-reference",
        metavar="POLICY",
        help="policy contrasts: every policy against this one (contrasts.reference; default: "
        f"{defaults.CONTRAST_REFERENCE} when the table has a policy of that name)",
    )
    contrasts.add_argument(
        "--no-contrasts",
        action="store_true",
        help="no policy contrasts (contrasts.reference: null)",
    )
    parser.add_argument(
        "--resamples",
        type=int,
        help=f"random sign flips R ({defaults.RESAMPLES}: tests.resamples)",
    )
    parser.add_argument(
        "--alpha", type=float, help=f"significance level ({defaults.SIGNIFICANCE}: tests.alpha)"
    )
    parser.add_argument(
        "--seed",
        type=options.seed,
        help=f"seed of the sign flips ({defaults.TEST_SEED}: tests.seed)",
    )
    parser.add_argument("--alternative", choices=ALTERNATIVES, help=f"({defaults.ALTERNATIVE})")
    parser.add_argument(
        "--predictions",
        nargs="+",
        metavar="RUN_DIR",
        help="run directories with predictions.parquet (and folds.parquet) for McNemar's test",
    )
    parser.add_argument(
        "--mcnemar-method", choices=MCNEMAR_METHODS, help=f"({defaults.MCNEMAR_METHOD})"
    )
    parser.add_argument(
        "--quiet", action="store_true", help="no progress on stderr, no summary on stdout"
    )
    parser.set_defaults(run=run)
    return parser


def settings_from(args, reference_policy: str | None = None):
    """The :class:`~delaycv.stats.settings.CompareSettings` of the options (those not given: the
    defaults), every value checked by :func:`~delaycv.stats.settings.make_compare_settings`."""
    from delaycv.stats.settings import make_compare_settings

    return make_compare_settings(
        **options.given(
            metrics=args.metrics,
            references=args.references,
            checkpoints=options.checkpoint_request(args),
            resamples=args.resamples,
            alpha=args.alpha,
            seed=args.seed,
            alternative=args.alternative,
            reference_policy=reference_policy,
            mcnemar_method=args.mcnemar_method,
        )
    )


def run(args) -> int:
    try:
        return _run(args)
    except ConfigError as err:
        raise options.on_the_command_line(err, OPTIONS) from None


def _run(args) -> int:
    from delaycv.common.atomic import check_output

    settings = settings_from(args, args.contrasts_reference)
    out = check_output(args.out, directory=True)
    # the options are checked: now the modules of the tests (numpy, pandas, scipy)
    from delaycv.stages.compare import compare
    from delaycv.tables.results import read_table

    present = read_table(args.merged, ["checkpoint", "policy"])
    options.check_checkpoints_in_table(
        settings.checkpoints, present["checkpoint"].unique().tolist(), str(args.merged)
    )
    if args.contrasts_reference is None and not args.no_contrasts:
        # the workflow's rule: ideal when the study has it (delaycv.common.defaults)
        reference = defaults.contrast_reference(present["policy"].unique())
        settings = settings_from(args, reference)
    result = compare(
        args.merged,
        out,
        settings,
        predictions=args.predictions or (),
        progress=None if args.quiet else (lambda m: print(f"delaycv: {m}", file=sys.stderr)),
    )
    if args.predictions and "corrected" in settings.references:
        from delaycv.stats.mcnemar import NOT_CORRECTED

        print(
            f"delaycv: note: McNemar's tests: not of the corrected reference: {NOT_CORRECTED}",
            file=sys.stderr,
        )
    for note in result.notes():  # (rows without a test, tests that cannot be significant)
        print(f"delaycv: note: {note}", file=sys.stderr)
    if not args.quiet:
        print(f"{result.summary()} -> {out}", file=sys.stdout)
    return 0
