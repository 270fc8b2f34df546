"""The compare stage: a merged per-fold table -> the learner tests, the bias tests, the policy
contrasts, and their pages.

:func:`compare` is what the workflow's ``compare`` rule (``scripts/compare.py``) and
``delaycv compare`` run. It writes into one folder, each file atomically and only after every
test has been computed:

* ``tests.parquet``/``.csv``/``.html``: pairwise permutation tests between learners at the
  requested checkpoints (:func:`delaycv.stats.learner_tests.run_tests`), Holm-adjusted, with effect
  sizes;
* ``strip.parquet``: the same tests at every checkpoint (the figures' significance strip);
* ``bias.parquet``/``.csv``/``.html``: the bias of realistic evaluation (observed-label against
  true-label values, :func:`delaycv.stats.bias.bias_tests`) at the same checkpoints;
* ``contrasts.parquet``/``.csv``/``.html`` (with a reference policy): every policy against it
  (:func:`delaycv.stats.contrasts.policy_contrasts`) at the same checkpoints;
* ``mcnemar.parquet``/``.csv`` (with run directories that logged their predictions): McNemar's
  test per fold for every learner pair of the same (dataset, policy, seed).

The HTML pages are the tables as the report shows them (:mod:`delaycv.report.statistics`); the CSV
files hold every column.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from delaycv.common.atomic import atomic_path
from delaycv.common.errors import InputError
from delaycv.report.statistics import bias_html, contrasts_html, tests_html
from delaycv.stages._tables import (
    absent_notes,
    absent_references,
    effort_scope_of,
    read_merged,
)
from delaycv.stats.bias import bias_tests
from delaycv.stats.checkpoints import (
    choose_checkpoints,
    out_of_reach_notes,
    require_an_answer,
    shared_note,
    untested_notes,
)
from delaycv.stats.contrasts import policy_contrasts
from delaycv.stats.learner_tests import run_tests
from delaycv.stats.mcnemar import mcnemar_references, mcnemar_tests
from delaycv.stats.settings import CompareSettings, make_compare_settings
from delaycv.tables.results import read_table

#: the file names of :func:`compare`'s outputs in its folder, by table
FILES = {
    "tests": ("tests.parquet", "tests.csv", "tests.html"),
    "strip": ("strip.parquet", None, None),
    "bias": ("bias.parquet", "bias.csv", "bias.html"),
    "contrasts": ("contrasts.parquet", "contrasts.csv", "contrasts.html"),
    "mcnemar": ("mcnemar.parquet", "mcnemar.csv", None),
}


@dataclass
class Comparison:
    """What :func:`compare` computed (each table as written) and the files it wrote."""

    tests: pd.DataFrame
    strip: pd.DataFrame
    bias: pd.DataFrame | None = None
    contrasts: pd.DataFrame | None = None
    mcnemar: pd.DataFrame | None = None
    files: list[Path] = field(default_factory=list)
    settings: CompareSettings = field(default_factory=make_compare_settings)  #: as tested
    #: the references asked for that the table has no row of (no test of them)
    absent_references: tuple[str, ...] = ()

    def tables(self) -> dict[str, pd.DataFrame]:
        """The computed tables by name (those not computed left out), in the order written."""
        found = {name: getattr(self, name) for name in FILES}
        return {name: frame for name, frame in found.items() if frame is not None}

    def notes(self) -> list[str]:
        """Per table of tests, how many rows have no test and why (a test with no value is a row
        with a note), and how many tests cannot be significant and why
        (:func:`~delaycv.stats.checkpoints.out_of_reach_notes`): the lines the workflow's log and
        ``delaycv compare`` show."""
        lines = [f"tests: {n}" for n in absent_notes(self.absent_references, "no test of it")]
        alpha, resamples = self.settings.alpha, self.settings.resamples
        for what, frame in self.tables().items():
            if what not in ("tests", "bias", "contrasts"):
                continue
            for note, count in untested_notes(frame):
                lines.append(f"{what}: {count} rows without a test: {note}")
            reach = pd.Series(out_of_reach_notes(frame, alpha=alpha, resamples=resamples))
            for note, count in reach[reach != ""].value_counts(sort=False).items():
                lines.append(f"{what}: {count} tests cannot be significant: {note}")
        return lines

    def summary(self) -> str:
        """The closing line: how many tests (and how many significant), strip tests, bias tests
        and contrasts were computed."""
        significant = int(self.tests["significant"].eq(True).sum())  # (no test: not True)
        return (
            f"{len(self.tests)} tests ({significant} significant after Holm at "
            f"alpha={self.settings.alpha}), {len(self.strip)} strip tests"
            + (f", {len(self.bias)} bias tests" if self.bias is not None else "")
            + (f", {len(self.contrasts)} contrasts" if self.contrasts is not None else "")
            + (f", {len(self.mcnemar)} McNemar's tests" if self.mcnemar is not None else "")
        )


def compare(
    merged: str | Path,
    out: str | Path,
    settings: CompareSettings | None = None,
    *,
    predictions: Sequence[str | Path] = (),
    dataset: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> Comparison:
    """Compare the learners (and the policies) of the merged per-fold table ``merged`` into the
    folder ``out`` (module docstring; the folder is created if needed).

    Parameters
    ----------
    merged
        A merged per-fold table (Parquet: ``delaycv merge``, the workflow's ``merge`` rule).
    out
        The folder of the outputs (:data:`FILES`).
    settings
        What is tested, where and how (:class:`~delaycv.stats.settings.CompareSettings`: the
        workflow's ``tests`` and ``contrasts`` sections, or the options of ``delaycv compare``);
        None: the defaults. Every table uses the same checkpoints.
    predictions
        Run directories with ``predictions.parquet``: McNemar's tests (the settings'
        ``mcnemar_method``) against the settings' references of 0/1 labels (observed, true; not
        the corrected one: :func:`~delaycv.stats.mcnemar.mcnemar_references`, checked before
        any test); none when empty.
    dataset
        The name in the pages' titles (default: the table's datasets).
    progress
        Called with a line of text at each step (the workflow's log), or ``None``.

    Returns
    -------
    Comparison
        The tables and the files written; its notes (rows without a test, tests that cannot be
        significant: :meth:`~Comparison.notes`) and its closing line
        (:meth:`~Comparison.summary`) are for the caller to show.
    """
    settings = settings if settings is not None else make_compare_settings()
    say = progress if progress is not None else (lambda message: None)
    metrics = list(settings.metrics)
    mcnemar_refs = mcnemar_references(settings.references) if predictions else ()  # first
    table = read_merged(merged, metrics)
    say(f"read {merged}: {len(table)} rows")
    require_an_answer(choose_checkpoints(table, settings.checkpoints), str(merged))  # then
    strip, tests = _learner_tests(table, settings, say)
    absent = absent_references(settings.references, table)
    result = Comparison(tests=tests, strip=strip, settings=settings, absent_references=absent)
    bias = settings.bias
    if bias is None:
        bias = {"observed", "true"} <= set(table["reference"].unique())
    if bias:
        result.bias = _bias_tests(table, settings, say)
    if settings.reference_policy is not None:
        result.contrasts = _policy_contrasts(table, settings, say)
    if predictions:
        say(f"mcnemar: {len(predictions)} run directories")
        result.mcnemar = mcnemar_from_runs(
            predictions,
            references=mcnemar_refs,
            method=settings.mcnemar_method,
            alpha=settings.alpha,
        )
    name = dataset if dataset is not None else ", ".join(map(str, table["dataset"].unique()))
    scope = effort_scope_of([merged], settings.metrics)
    result.files = _write(result, Path(out), name, settings, scope)
    return result


def _common(settings: CompareSettings) -> dict:
    """The keywords every test of ``settings`` shares (metrics, references, resamples, alpha,
    seed)."""
    return {
        "metrics": list(settings.metrics),
        "references": list(settings.references),
        "resamples": settings.resamples,
        "alpha": settings.alpha,
        "seed": settings.seed,
    }


def _learner_tests(
    table: pd.DataFrame, settings: CompareSettings, say: Callable[[str], None]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The learner tests at every checkpoint (the strip) and at the requested checkpoints (the
    strip itself when they are ``"all"``), saying first which requested checkpoints carry a
    note."""
    common = _common(settings)
    say(f"strip: tests of {', '.join(common['metrics'])} at every checkpoint")
    strip = run_tests(
        table,
        checkpoints="all",
        alternative=settings.alternative,
        progress=lambda m: say(f"strip: {m}"),
        **common,
    )
    checkpoints = settings.checkpoints
    _say_checkpoint_notes(table, checkpoints, say)
    if checkpoints == "all":
        return strip, strip
    say(f"tests: at checkpoints {checkpoints}")
    tests = run_tests(
        table,
        checkpoints=checkpoints,
        alternative=settings.alternative,
        progress=lambda m: say(f"tests: {m}"),
        **common,
    )
    return strip, tests


def _say_checkpoint_notes(
    table: pd.DataFrame,
    checkpoints: str | int | Sequence[int] | Mapping[str, Sequence],
    say: Callable[[str], None],
) -> None:
    """Say each requested checkpoint of a dataset that carries a note (a row with no test, or a
    note in the tables)."""
    for row in choose_checkpoints(table, checkpoints).itertuples():
        if row.note:
            what = "a row with no test" if pd.isna(row.checkpoint) else "noted in the tables"
            say(f"checkpoints: {row.at} of dataset {row.dataset}: {row.note} ({what})")


def _bias_tests(
    table: pd.DataFrame, settings: CompareSettings, say: Callable[[str], None]
) -> pd.DataFrame:
    """The bias tests (observed against true labels) at the requested checkpoints."""
    say(f"bias: observed against true labels at checkpoints {settings.checkpoints}")
    return bias_tests(
        table,
        metrics=list(settings.metrics),
        resamples=settings.resamples,
        seed=settings.seed,
        checkpoints=settings.checkpoints,
        alpha=settings.alpha,
        progress=lambda m: say(f"bias: {m}"),
    )


def _policy_contrasts(
    table: pd.DataFrame, settings: CompareSettings, say: Callable[[str], None]
) -> pd.DataFrame:
    """Every policy against the settings' reference policy at the requested checkpoints."""
    reference, checkpoints = settings.reference_policy, settings.checkpoints
    say(f"contrasts: every policy against {reference} at checkpoints {checkpoints}")
    return policy_contrasts(
        table,
        reference_policy=reference,
        checkpoints=checkpoints,
        progress=lambda m: say(f"contrasts: {m}"),
        **_common(settings),
    )


def _write(
    result: Comparison,
    out: Path,
    dataset: str,
    settings: CompareSettings,
    effort_scope: str | None = None,
) -> list[Path]:
    """Write the tables of ``result`` (Parquet and CSV) and their pages into ``out`` (the
    effort-aware measures' scope, when given, in the pages' headings); return the files
    written."""
    metrics, alpha, resamples = list(settings.metrics), settings.alpha, settings.resamples
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, frame in result.tables().items():
        parquet, csv, _ = FILES[name]
        with atomic_path(out / parquet) as tmp:
            frame.to_parquet(tmp, index=False, write_page_checksum=True)
        written.append(out / parquet)
        if csv is not None:
            with atomic_path(out / csv) as tmp:
                frame.to_csv(tmp, index=False)
            written.append(out / csv)

    def page(make: Callable[..., str], frame: pd.DataFrame, title: str, **options) -> str:
        """A page of ``frame`` (``make``: tests_html, bias_html or contrasts_html), the note every
        test shares said once (:func:`~delaycv.stats.checkpoints.shared_note`)."""
        shared = shared_note(frame, alpha=alpha, resamples=resamples)
        return make(
            frame,
            title=title,
            metrics=metrics,
            effort_scope=effort_scope,
            shared_note=shared,
            **options,
        )

    pages = [
        ("tests", page(tests_html, result.tests, f"Pairwise learner tests: dataset {dataset}"))
    ]
    if result.bias is not None:
        title = f"Bias of realistic evaluation: dataset {dataset}"
        pages.append(("bias", page(bias_html, result.bias, title, alpha=alpha)))
    if result.contrasts is not None:
        title = (
            f"Policy contrasts: dataset {dataset}, every policy against {settings.reference_policy}"
        )
        pages.append(("contrasts", page(contrasts_html, result.contrasts, title, alpha=alpha)))
    for name, html in pages:
        path = out / FILES[name][2]
        with atomic_path(path) as tmp:
            tmp.write_text(html, encoding="utf-8")
        written.append(path)
    return written


def mcnemar_from_runs(
    run_dirs: Sequence[str | Path], *, references: Sequence[str], method: str, alpha: float
) -> pd.DataFrame:
    """McNemar's tests for the learner pairs of each (dataset, policy, seed) among run
    directories (each with ``folds.parquet`` and ``predictions.parquet``).

    Parameters
    ----------
    run_dirs
        Run directories of ``delaycv evaluate --predictions``, one per learner of a (dataset,
        policy, seed).
    references, method, alpha
        The labels to score against, ``exact`` or ``chi2``, the significance level.

    Returns
    -------
    pandas.DataFrame
        One row per test (:func:`delaycv.stats.mcnemar.mcnemar_tests`), with its ``dataset``,
        ``policy`` and ``seed`` first; empty without run directories.
    """
    groups: dict[tuple, dict[str, pd.DataFrame]] = {}
    for run_dir in map(Path, run_dirs):
        keys = read_table(run_dir / "folds.parquet", ["dataset", "learner", "seed", "policy"])
        if keys.empty:
            raise InputError("empty table", path=str(run_dir / "folds.parquet"), expected="rows")
        first = keys.iloc[0]
        log = read_table(run_dir / "predictions.parquet")
        group = groups.setdefault((first["dataset"], first["policy"], int(first["seed"])), {})
        if first["learner"] in group:
            raise InputError(
                f"learner {first['learner']!r} given twice for one (dataset, policy, seed)",
                path=str(run_dir),
                expected="one run directory per learner",
            )
        group[first["learner"]] = log
    frames = []
    for (dataset, policy, seed), logs in sorted(groups.items()):
        for reference in references:
            res = mcnemar_tests(logs, reference=reference, method=method, alpha=alpha)
            res.insert(0, "seed", seed)
            res.insert(0, "policy", policy)
            res.insert(0, "dataset", dataset)
            frames.append(res)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
