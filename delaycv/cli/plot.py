"""``delaycv plot MERGED.parquet --tests DIR --out DIR``: draw the comparison figures (PNG and PDF;
SVG too with ``--format``): the workflow's figures stage (:func:`delaycv.stages.figures.figures`).

Figures (see delaycv.figures): learning curves with the significance strip, the bias of realistic
evaluation, final per-fold distributions, the pairwise heatmap and the waiting-time sensitivity;
with ``--contrasts`` (the ``contrasts.parquet`` of ``delaycv compare --contrasts-reference``) the
difference to the reference policy.
Every figure is drawn before any file is moved into ``--out``; existing other files stay. The same
inputs draw byte-identical files (seeded jitter, no creation date). The sensitivity figure takes
each policy's windows from the spec its runs used (``--runs``: their run.json files), else from
its name (``hitl_7d_90d``; other names need ``--runs`` or ``--window``). A policy it cannot put on
a window axis is named in the figure and in a warning on stderr. The options have the defaults of
the workflow's ``figures`` section (``delaycv.common.defaults``; the metrics: the tested ones,
the significance level: the tests'): without options it draws what the workflow's figures stage
draws with the default config.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from delaycv.cli import description, options
from delaycv.common import defaults
from delaycv.common.bounds import BOUNDS
from delaycv.common.choices import FIGURE_FORMATS, REFERENCES, X_AXES
from delaycv.common.errors import ConfigError, DelaycvError, InputError
from delaycv.protocol.durations import parse_window

#: The option that sets each key of :class:`~delaycv.figures.settings.FigureSettings` (its
#: errors name the option).
OPTIONS = {
    "figures.metric": "--metric",
    "figures.reference": "--reference",
    "figures.learner": "--baseline",
    "tests.alpha": "--alpha",
    "x": "--x",
    "figures.formats": "--format",
    "figures.dpi": "--dpi",
    "seed": "--seed",
    "estimator": "--estimator",
    "datasets": "--dataset",
    "jobs": "--jobs",
}


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
        help="policy contrasts (contrasts.parquet of `delaycv compare`): their figures too",
    )
    parser.add_argument("--out", required=True, help="folder for the figures")
    parser.add_argument(
        "--metric",
        action="append",
        dest="metrics",
        metavar="M",
        help="metric to draw, a set of figures each (repeat; "
        f"{' '.join(defaults.TEST_METRICS)}: the tested metrics)",
    )
    parser.add_argument(
        "--reference",
        choices=REFERENCES,
        help=f"labels of the curves ({defaults.FIGURE_REFERENCE}: figures.reference)",
    )
    parser.add_argument("--estimator", help="estimator to draw (default: each in the table)")
    parser.add_argument("--dataset", action="append", dest="datasets", help="dataset (repeat; all)")
    parser.add_argument(
        "--baseline",
        help="strip: each learner against this one (default: pairs; figures.learner)",
    )
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
    parser.add_argument(
        "--alpha",
        type=float,
        help=f"significance level named in the legend ({defaults.SIGNIFICANCE}: tests.alpha)",
    )
    parser.add_argument("--x", choices=X_AXES, help=f"({defaults.X_AXIS})")
    parser.add_argument(
        "--format",
        nargs="+",
        choices=FIGURE_FORMATS,
        help=f"({' '.join(defaults.FORMATS)}: figures.formats)",
    )
    dpi = BOUNDS["dpi"]
    parser.add_argument(
        "--dpi",
        type=int,
        help=f"resolution of the PNG files, {dpi.minimum} to {dpi.maximum} "
        f"({defaults.DPI}: figures.dpi)",
    )
    parser.add_argument(
        "--seed",
        type=options.seed,
        help=f"seed of the final distributions' point jitter ({defaults.JITTER_SEED})",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="processes that draw the metrics' figures side by side (1; the same files)",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="no list of the files written on stdout"
    )
    parser.set_defaults(run=run)
    return parser


def settings_from(args):
    """The :class:`~delaycv.figures.settings.FigureSettings` of the options (those not given: the
    defaults), every value checked by :func:`~delaycv.figures.settings.make_figure_settings`."""
    from delaycv.figures.settings import make_figure_settings

    return make_figure_settings(
        **options.given(
            metrics=args.metrics,
            reference=args.reference,
            baseline=args.baseline,
            alpha=args.alpha,
            x=args.x,
            formats=args.format,
            dpi=args.dpi,
            seed=args.seed,
            estimator=args.estimator,
            datasets=args.datasets,
        )
    )


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
    try:
        return _run(args)
    except ConfigError as err:
        raise options.on_the_command_line(err, OPTIONS) from None


def _run(args) -> int:
    from delaycv.common.atomic import check_output

    settings = settings_from(args)
    out = check_output(args.out, directory=True)
    tests = _tests(args.tests)
    windows = _windows(args.window)
    policy_specs = _policy_specs(args.runs)
    # the options are checked: now the modules of the figures (matplotlib, seaborn, pandas)
    from delaycv.stages.figures import figures

    written = figures(
        args.merged,
        out,
        settings,
        tests=tests,
        contrasts=args.contrasts,
        windows=windows,
        policy_specs=policy_specs,
        replace=False,
        jobs=args.jobs,
    )
    if not args.quiet:
        for path in written:
            print(path, file=sys.stdout)
    return 0
