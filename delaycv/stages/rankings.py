"""The rankings stage: the merged tables of every dataset -> rankings, their pages and figures.

:func:`rankings` is what the workflow's ``rankings`` rule (``scripts/rankings.py``) and
``delaycv rank`` run. It ranks the learners within each policy and the policies within each
learner (:mod:`delaycv.stats.families`) and writes into one folder, each file atomically:

* across datasets: ``friedman.parquet``/``.csv`` (Friedman mean ranks, statistic, p, critical
  difference), ``nemenyi.csv`` (the Nemenyi p-value of every pair), ``scott_knott.parquet``/``.csv``
  (Scott-Knott ESD groups) and ``rankings.html``;
* within each dataset over its (seed, fold) pairs: ``within.parquet``/``.csv`` and ``within.html``;
* ``figures/``: critical-difference diagrams and Scott-Knott ESD box plots of the figures'
  metrics and reference (:func:`delaycv.figures.rankings.draw_ranking_figures`).

The checkpoints are chosen as the tests choose them (:func:`delaycv.stats.checkpoints.choose_checkpoints`;
``all``: every checkpoint, each ranked on its own, aligned across datasets by its number); a
position beyond a dataset's stream leaves that dataset out of the position's families (a line of
progress), and a position answered by a later checkpoint says so. Families with fewer than 3
datasets carry a note instead of a test; a treatment with no value on any dataset (a policy that
released no label before the end of the stream) is not ranked, with a note in the tables, on the
pages, in its family's figures and in :meth:`RankingResult.notes`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from delaycv.common.atomic import atomic_dir, atomic_path
from delaycv.common.errors import InputError
from delaycv.figures.rankings import draw_ranking_figures
from delaycv.report.statistics import rankings_html
from delaycv.stages._tables import (
    absent_notes,
    absent_references,
    effort_scope_of,
    read_merged,
)
from delaycv.stats.checkpoints import choose_checkpoints, require_an_answer
from delaycv.stats.families import FAMILY, Rankings, rank_across, rank_within
from delaycv.stats.settings import RankingSettings, make_ranking_settings
from delaycv.tables.merge import StreamNames, table_streams
from delaycv.tables.results import read_table, write_table


@dataclass
class RankingResult:
    """What :func:`rankings` computed and wrote."""

    rows: pd.DataFrame  #: the per-fold rows ranked (the chosen checkpoints, an ``at`` column)
    across: Rankings  #: across datasets
    within: pd.DataFrame  #: within each dataset
    files: list[Path] = field(default_factory=list)  #: the tables and pages
    figures: list[Path] = field(default_factory=list)  #: the figure files (in their folder)
    #: the references asked for that the tables have no row of (nothing of them ranked)
    absent_references: tuple[str, ...] = ()

    def notes(self) -> list[str]:
        """The references asked for that the tables have no row of, then the treatments not
        ranked across datasets, one line per note with how many rows carry it: the lines the
        workflow's log and ``delaycv rank`` show."""
        friedman = self.across.friedman
        unranked = friedman[friedman["note"].str.endswith("not ranked")]
        return absent_notes(self.absent_references, "no ranking of it") + [
            f"not ranked ({count} rows across datasets): {note}"
            for note, count in unranked["note"].value_counts(sort=False).items()
        ]

    def summary(self) -> str:
        """The closing line: the families across datasets (how many tested, and why the others
        are not: each reason with its count of families), the rows within datasets and the figure
        files.

        >>> t = pd.DataFrame({"dataset": ["d1", "d1", "d2", "d2"], "learner": ["a", "b"] * 2,
        ...     "policy": "ideal", "seed": 1, "fold": 0, "reference": "true",
        ...     "estimator": "cumulative", "checkpoint": 100, "gmean": [0.9, 0.8, 0.7, 0.6]})
        >>> from delaycv.stats.families import rank_across
        >>> across = rank_across(t, "gmean", ranked=("learner", "policy"))
        >>> print(RankingResult(t, across, pd.DataFrame()).summary().replace("; ", ";\\n"))
        3 families across datasets (0 tested;
        not tested: 1 treatment: nothing to rank (2 families);
        2 datasets: the tests need at least 3 (1 family)), 0 rows within datasets, 0 figure files
        """
        families = self.across.friedman.groupby(list(FAMILY), sort=False)["note"]
        tested = families.agg(lambda notes: bool((notes == "").any()))
        untested = families.first()[~tested].value_counts(sort=True)
        why = "; ".join(
            f"{note} ({count} {'family' if count == 1 else 'families'})"
            for note, count in untested.items()
        )
        return (
            f"{len(self.across.families())} families across datasets ({int(tested.sum())} tested"
            f"{'; not tested: ' + why if why else ''}), "
            f"{len(self.within)} rows within datasets, {len(self.figures)} figure files"
        )


def ranked_rows(
    merged: Sequence[str | Path],
    *,
    metrics: Sequence[str],
    references: Sequence[str],
    checkpoints: str | int | Sequence[int] | Mapping[str, Sequence],
    progress: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """The rows of the merged tables ``merged`` that the rankings rank: the ``references``, at the
    chosen ``checkpoints`` of each dataset, with the position requested in column ``at``.

    Examples
    --------
    >>> import tempfile
    >>> t = pd.DataFrame({"dataset": "d", "policy": "p", "estimator": "prequential",
    ...     "reference": "true", "checkpoint": [5, 10], "learner": "a", "seed": 1, "fold": 0,
    ...     "time": [50.0, 100.0], "gmean": [0.5, 0.6], "evaluated": [5, 10]})
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     t.to_parquet(f"{folder}/d.parquet")
    ...     rows = ranked_rows([f"{folder}/d.parquet"], metrics=["gmean"],
    ...         references=["true"], checkpoints="last")
    >>> rows[["checkpoint", "at", "gmean"]].to_dict("records")
    [{'checkpoint': 10, 'at': 'last', 'gmean': 0.6}]
    """
    say = progress if progress is not None else (lambda message: None)
    check_one_table_per_dataset(merged, say)
    pieces, requests = [], []
    for path in merged:
        table = read_merged(path, metrics)
        table = table[table["reference"].isin(references)]
        chosen = choose_checkpoints(table, checkpoints)
        requests.append(chosen)
        for row in chosen[chosen["note"] != ""].itertuples():
            what = "not ranked" if pd.isna(row.checkpoint) else "ranked there"
            say(f"checkpoints: {row.at} of dataset {row.dataset}: {row.note} ({what})")
        found = chosen.dropna(subset=["checkpoint"]).astype({"checkpoint": "int64"})
        # `all`: each checkpoint is its own position (a family never averages over checkpoints)
        every = found["at"] == "all"
        found.loc[every, "at"] = "checkpoint_" + found.loc[every, "checkpoint"].astype(str)
        pieces.append(
            table.merge(found[["dataset", "checkpoint", "at"]], on=["dataset", "checkpoint"])
        )
        say(f"read {path}: {len(table)} rows, {len(pieces[-1])} at the chosen checkpoints")
    require_an_answer(pd.concat(requests, ignore_index=True), " ".join(map(str, merged)))
    return pd.concat(pieces, ignore_index=True)


def check_one_table_per_dataset(
    merged: Sequence[str | Path], say: Callable[[str], None] = lambda message: None
) -> None:
    """Refuse, before any work, a dataset in two of the tables ``merged`` (the rankings would
    average the two: merge a dataset's runs into one table, which refuses a run twice) and two
    dataset names for one stream (the same content, whatever the files' form: Friedman's n
    would count it twice; :class:`~delaycv.tables.merge.StreamNames`). A table that records no
    stream digests (written otherwise than by ``delaycv merge``) is said in the progress."""
    owner: dict[str, str] = {}
    names = StreamNames()
    for path in map(str, merged):
        for dataset in read_table(path, ["dataset"])["dataset"].unique().tolist():
            if dataset in owner:
                raise InputError(
                    f"dataset {dataset!r} is also in {owner[dataset]}",
                    path=path,
                    expected="each dataset in one merged table (the rankings would average the "
                    "two: merge its runs into one table)",
                )
            owner[dataset] = path
        names.add(path, table_streams(path))
    for path in names.unknown:
        say(
            f"{path} records no stream digests (not written by delaycv merge): two dataset "
            "names for one stream cannot be told apart there"
        )


def rankings(
    merged: Sequence[str | Path],
    out: str | Path,
    settings: RankingSettings | None = None,
    *,
    progress: Callable[[str], None] | None = None,
) -> RankingResult:
    """Rank across datasets and within each dataset from the merged tables ``merged`` (one per
    dataset) into the folder ``out`` (module docstring; created if needed).

    Parameters
    ----------
    merged
        The merged per-fold tables of the datasets (Parquet).
    out
        The folder of the tables, the pages and ``figures/``.
    settings
        What is ranked and drawn (:class:`~delaycv.stats.settings.RankingSettings`: what the
        workflow's ``tests``, ``rankings`` and ``figures`` sections say, or the options of
        ``delaycv rank``); None: the defaults.
    progress
        Called with a line of text at each step (the workflow's log), or ``None``.

    Returns
    -------
    RankingResult
        The rows ranked, the rankings across and within datasets, the files written; its
        treatments not ranked (:meth:`~RankingResult.notes`) and its closing line
        (:meth:`~RankingResult.summary`) are for the caller to show.
    """
    settings = settings if settings is not None else make_ranking_settings()
    say = progress if progress is not None else (lambda message: None)
    metrics, version = list(settings.ranked_metrics), settings.version
    rows = ranked_rows(
        merged,
        metrics=metrics,
        references=settings.ranked_references,
        checkpoints=settings.checkpoints,
        progress=say,
    )
    say(
        f"across datasets: Friedman/Nemenyi and Scott-Knott ESD ({version}) of {', '.join(metrics)}"
    )
    across = rank_across(
        rows,
        metrics,
        version=version,
        alpha=settings.alpha,
        resamples=settings.resamples,
        seed=settings.seed,
    )
    say(f"within datasets: Scott-Knott ESD ({version}) over the (seed, fold) pairs")
    within = rank_within(rows, metrics, version=version)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    absent = absent_references(settings.ranked_references, rows)
    result = RankingResult(rows=rows, across=across, within=within, absent_references=absent)
    result.files += _write_tables(across, within, out)
    scope = effort_scope_of(merged, metrics)
    result.files += _write_pages(across, within, out, metrics, scope)
    drawn = figure_families(across, settings.checkpoints)
    say(
        "figures: critical-difference diagrams and Scott-Knott ESD box plots"
        + ("" if drawn is None else f" at {FIGURES_OF_ALL}")
    )
    written = _draw_figures(rows, across, out, settings, drawn)
    result.figures = [out / "figures" / path.name for path in written]
    return result


def _write_tables(across: Rankings, within: pd.DataFrame, out: Path) -> list[Path]:
    """Write the tables across datasets (Friedman, Nemenyi, Scott-Knott ESD) and within each
    dataset into ``out`` (Parquet and CSV; Nemenyi as CSV only); return the files written."""
    files = []
    for frame, parquet, csv in (
        (across.friedman, "friedman.parquet", "friedman.csv"),
        (across.nemenyi, None, "nemenyi.csv"),
        (across.scott_knott, "scott_knott.parquet", "scott_knott.csv"),
        (within, "within.parquet", "within.csv"),
    ):
        if parquet is not None:
            write_table(frame, out / parquet)
            files.append(out / parquet)
        with atomic_path(out / csv) as tmp:
            frame.to_csv(tmp, index=False)
        files.append(out / csv)
    return files


def _write_pages(
    across: Rankings,
    within: pd.DataFrame,
    out: Path,
    metrics: list[str],
    effort_scope: str | None = None,
) -> list[Path]:
    """Write the pages ``rankings.html`` (across datasets) and ``within.html`` (within each
    dataset) into ``out``; return the files written."""
    pages = (
        (
            rankings_html(
                across.friedman,
                across.scott_knott,
                title="Rankings across datasets",
                metrics=metrics,
                effort_scope=effort_scope,
            ),
            out / "rankings.html",
        ),
        (
            rankings_html(
                scott_knott=within,
                title="Scott-Knott ESD within each dataset",
                metrics=metrics,
                effort_scope=effort_scope,
            ),
            out / "within.html",
        ),
    )
    files = []
    for page, path in pages:
        with atomic_path(path) as tmp:
            tmp.write_text(page, encoding="utf-8")
        files.append(path)
    return files


#: Where the ranking figures of a study ranked at every checkpoint are drawn.
FIGURES_OF_ALL = (
    "each family's last checkpoint ranked on the most datasets (checkpoints all: one figure of "
    "each, not one per checkpoint; the tables and pages have them all)"
)


def figure_families(across: Rankings, checkpoints) -> set[tuple] | None:
    """The families across datasets whose figures are drawn: every one (None), but when the
    rankings are at every checkpoint (``checkpoints`` ``"all"``), one per kind of family (what is
    ranked within what, reference, estimator and metric): at its last checkpoint among those
    ranked on the most datasets (:data:`FIGURES_OF_ALL`). At every checkpoint, a study of 25,000
    commits with a checkpoint every 50 drew 9,980 files in 14 minutes.

    Examples
    --------
    >>> t = pd.DataFrame({"dataset": ["d1", "d1", "d2", "d2"] * 2, "learner": ["a", "b"] * 4,
    ...     "policy": "ideal", "seed": 1, "fold": 0, "reference": "true",
    ...     "estimator": "cumulative", "gmean": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2],
    ...     "at": ["checkpoint_100"] * 4 + ["checkpoint_200"] * 4})
    >>> from delaycv.stats.families import rank_across
    >>> sorted(figure_families(rank_across(t, "gmean", ranked=("learner",)), "all"))
    [('learner', 'ideal', 'true', 'cumulative', 'checkpoint_200', 'gmean')]
    """
    if checkpoints != "all":
        return None
    families = across.friedman.drop_duplicates(list(FAMILY))[[*FAMILY, "n"]]
    position = families["at"].str.removeprefix("checkpoint_").astype("int64")
    families = families.assign(position=position).sort_values(["n", "position"], kind="stable")
    kind = [column for column in FAMILY if column != "at"]
    last = families.groupby(kind, sort=False).tail(1)
    return set(last[list(FAMILY)].itertuples(index=False, name=None))


def _draw_figures(
    rows: pd.DataFrame,
    across: Rankings,
    out: Path,
    settings: RankingSettings,
    families: set[tuple] | None,
) -> list[Path]:
    """Draw the ranking figures of each of the settings' figure metrics into the folder
    ``out/figures`` (replaced as a whole, atomically), of ``families`` (None: every one);
    return the files drawn (their names in that folder)."""
    with atomic_dir(out / "figures") as tmp:
        written = []
        for metric in settings.figure_metrics:
            written += draw_ranking_figures(
                rows,
                across,
                tmp,
                metric=metric,
                reference=settings.figure_reference,
                formats=settings.formats,
                dpi=settings.dpi,
                families=families,
            )
    return written
