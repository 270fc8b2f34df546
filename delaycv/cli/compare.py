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
* ``contrasts.parquet`` + ``contrasts.csv`` + ``contrasts.html`` (with ``--contrasts-reference
  POLICY``): every policy against that policy, at the same checkpoints;
* ``mcnemar.parquet`` + ``mcnemar.csv`` (with ``--predictions RUN_DIR ...``): McNemar's test per
  fold for every learner pair of the same (dataset, policy, seed), from the prediction logs.

The checkpoints: ``--checkpoint`` (``last``, ``all`` or a checkpoint of the table), or positions
and fractions of each stream (``--checkpoint-position``, ``--checkpoint-fraction``: the config's
``tests.checkpoints``), each answered by the first checkpoint at or after it.
"""

from __future__ import annotations

import argparse
import sys

from delaycv.cli import options
from delaycv.common.choices import ALTERNATIVES, REFERENCES


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
        help="labels to score against (repeat; all three: observed, true, corrected)",
    )
    options.add_checkpoint_options(parser, "tested")
    parser.add_argument(
        "--contrasts-reference",
        metavar="POLICY",
        help="policy contrasts: every policy against this one (the config's contrasts.reference; "
        "default: no contrasts)",
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


def run(args) -> int:
    from delaycv.cli import check_number
    from delaycv.common.atomic import check_output

    checkpoints = options.checkpoint_request(args)
    check_number(args.resamples, "--resamples", low=1, expected="R >= 1")
    check_number(args.alpha, "--alpha", low=0, high=1, open_low=True, open_high=True)
    out = check_output(args.out, directory=True)
    # the options are checked: now the modules of the tests (numpy, pandas, scipy)
    from delaycv.stages.compare import compare
    from delaycv.stats.checkpoints import untested_notes
    from delaycv.tables.results import read_table

    present = read_table(args.merged, ["checkpoint"])["checkpoint"].unique().tolist()
    options.check_checkpoints_in_table(checkpoints, present, str(args.merged))
    result = compare(
        args.merged,
        out,
        metrics=args.metrics or ["gmean"],
        references=args.references or list(REFERENCES),
        checkpoints=checkpoints,
        resamples=args.resamples,
        alpha=args.alpha,
        seed=args.seed,
        alternative=args.alternative,
        reference_policy=args.contrasts_reference,
        predictions=args.predictions or (),
        mcnemar_method=args.mcnemar_method,
    )
    tests = result.tests
    # a test with no value is a row with a note, and said here
    labels = {"tests": "learner tests", "bias": "bias tests", "contrasts": "policy contrasts"}
    for name, label in labels.items():
        frame = getattr(result, name)
        for note, count in untested_notes(frame if frame is not None else tests.iloc[:0]):
            print(f"delaycv: note: {label} ({count}): {note}", file=sys.stderr)
    print(
        f"{len(tests)} tests ({int(tests['significant'].sum())} significant after Holm at "
        f"alpha={args.alpha}), {len(result.strip)} strip tests -> {out}",
        file=sys.stdout,
    )
    return 0
