"""``delaycv plot MERGED.parquet --tests DIR --out DIR``: draw the comparison figures (PNG and PDF):
the workflow's figures stage (:func:`delaycv.stages.figures.figures`).

Figures (see delaycv.figures): learning curves with the significance strip, the bias of realistic
evaluation, final per-fold distributions, the pairwise heatmap and the waiting-time sensitivity;
with ``--contrasts`` (the ``contrasts.parquet`` of ``delaycv compare --contrasts-reference``) the
difference to the reference policy.
Every figure is drawn before any file is moved into ``--out``; existing other files stay. The same
inputs draw byte-identical files (seeded jitter, no creation date). The sensitivity figure takes
each policy's windows from the spec its runs used (``--runs``: their run.json files), else from
its name (``hitl_7d_90d``; other names need ``--runs`` or ``--window``). A policy it cannot put on
a window axis is named in the figure and in a warning on stderr.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from delaycv.cli import description, options
from delaycv.common import defaults
from delaycv.common.bounds import BOUNDS
from delaycv.common.choices import FIGURE_FORMAT_CHOICES, FIGURE_FORMATS, REFERENCES
from delaycv.common.errors import DelaycvError, InputError
from delaycv.protocol.durations import parse_window

#: The largest --dpi (:data:`delaycv.common.bounds.BOUNDS`): beyond, matplotlib fails for want of
#: memory after minutes of work.
MAX_DPI = BOUNDS["dpi"].maximum


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "plot",
        help="draw the comparison figures of a merged per-fold table",
        description=description(__doc__),
    )
    parser.add_argument("merged", help="merged per-fold checkpoint table (Parquet)")
    parser.add_argument(
        "--tests",
        help="output folder of `delaycv compare` (uses strip.parquet, else tests.parquet) or a file",
    )
    parser.add_argument(
        "--contrasts",
        metavar="FILE",
        help="policy contrasts (contrasts.parquet of `delaycv compare --contrasts-reference`): "
        "their figures too",
    )
    parser.add_argument("--out", required=True, help="folder for the figures")
    parser.add_argument(
        "--metric", default=defaults.METRIC, help=f"metric to draw ({defaults.METRIC})"
    )
    parser.add_argument("--reference", default="true", choices=REFERENCES, help="(true)")
    parser.add_argument("--estimator", help="estimator to draw (default: each in the table)")
    parser.add_argument("--dataset", action="append", dest="datasets", help="dataset (repeat; all)")
    parser.add_argument("--baseline", help="strip: each learner against this one (default: pairs)")
    parser.add_argument(
        "--runs",
        action="append",
        metavar="DIR",
        help="run directories, or a folder holding them (e.g. results/runs): the sensitivity "
        "figure takes each policy's windows from the spec in their run.json (repeat; default: "
        "from the policy names)",
    )
    parser.add_argument(
        "--window",
        action="append",
        metavar="POLICY=WINDOW",
        help="waiting window of a policy for the sensitivity figure, e.g. fast=7d (repeat)",
    )
    parser.add_argument("--alpha", type=float, help="significance level named in the legend")
    parser.add_argument("--x", default="time", choices=("time", "checkpoint"), help="(time)")
    parser.add_argument(
        "--format",
        nargs="+",
        default=list(FIGURE_FORMATS),
        choices=FIGURE_FORMAT_CHOICES,
        help="(png pdf)",
    )
    parser.add_argument(
        "--dpi", type=int, default=200, help=f"resolution of the PNG files, 1 to {MAX_DPI} (200)"
    )
    parser.add_argument(
        "--seed",
        type=options.seed,
        default=0,
        help="seed of the final distributions' point jitter (0)",
    )
    parser.set_defaults(run=run)
    return parser


def _tests(path: str | None) -> Path | None:
    """The table of tests that ``--tests`` names (a folder: its strip.parquet, else tests.parquet)."""
    if path is None:
        return None
    path = Path(path)
    if path.is_dir():
        for name in ("strip.parquet", "tests.parquet"):
            if (path / name).is_file():
                return path / name
        raise InputError(
            "no strip.parquet or tests.parquet",
            path=str(path),
            expected="an output of delaycv compare",
        )
    return path


def _windows(items):
    if not items:
        return None
    out = {}
    for item in items:
        policy, sep, window = item.partition("=")
        if not sep or not policy or not window:
            raise InputError(
                f"window {item!r} is not POLICY=WINDOW",
                location="option --window",
                expected="e.g. hitl_fast=7d",
            )
        try:
            parse_window(window)
        except DelaycvError as err:
            raise InputError(
                str(err), location="option --window", expected="e.g. hitl_fast=7d"
            ) from None
        out[policy] = window
    return out


def _policy_specs(folders) -> dict[str, dict] | None:
    """Policy name -> the policy spec its runs used, from the run.json files under ``folders``."""
    if not folders:
        return None
    specs: dict[str, dict] = {}
    sources: dict[str, Path] = {}
    for folder in map(Path, folders):
        found = sorted(folder.rglob("run.json")) if folder.is_dir() else []
        if not found:
            raise InputError(
                "no run.json in it" if folder.is_dir() else "no such folder",
                path=str(folder),
                location="option --runs",
                expected="a run directory or a folder holding run directories",
            )
        for path in found:
            try:
                info = json.loads(path.read_text(encoding="utf-8"))
            except json.JSONDecodeError as err:
                raise InputError(
                    f"unreadable JSON: {err.msg}", path=str(path), location=f"line {err.lineno}"
                ) from None
            name = (info.get("run_keys") or {}).get("policy")
            spec = (info.get("specs") or {}).get("policy")
            if not isinstance(name, str) or not isinstance(spec, dict):
                raise InputError(
                    "no policy spec (run_keys.policy and specs.policy)",
                    path=str(path),
                    expected="the run.json of delaycv evaluate or of the workflow",
                )
            spec = {k: v for k, v in spec.items() if k != "name"}
            if name in specs and specs[name] != spec:
                raise InputError(
                    f"policy {name!r} has another spec than in {sources[name]}",
                    path=str(path),
                    expected="one spec per policy name",
                )
            specs[name], sources[name] = spec, path
    return specs


def run(args) -> int:
    logging.basicConfig(level=logging.WARNING, format="delaycv: warning: %(message)s")
    from delaycv.cli import check_number
    from delaycv.common.atomic import check_output

    check_number(args.dpi, "--dpi", low=1, high=MAX_DPI)
    check_number(args.alpha, "--alpha", low=0, high=1, open_low=True, open_high=True)

    out = check_output(args.out, directory=True)
    tests = _tests(args.tests)
    windows = _windows(args.window)
    policy_specs = _policy_specs(args.runs)
    # the options are checked: now the modules of the figures (matplotlib, seaborn, pandas)
    from delaycv.stages.figures import figures

    written = figures(
        args.merged,
        out,
        tests=tests,
        contrasts=args.contrasts,
        metrics=args.metric,
        reference=args.reference,
        estimator=args.estimator,
        datasets=args.datasets,
        baseline=args.baseline,
        windows=windows,
        policy_specs=policy_specs,
        alpha=args.alpha,
        x=args.x,
        formats=args.format,
        dpi=args.dpi,
        seed=args.seed,
        replace=False,
    )
    for path in written:
        print(path, file=sys.stdout)
    return 0
