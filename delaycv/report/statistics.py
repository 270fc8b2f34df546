"""Readable HTML pages of the comparison tables, for the workflow's Snakemake report.

Snakemake's report shows an HTML result inside the report, but offers a CSV only as a download.
:func:`tests_html`, :func:`bias_html` and :func:`contrasts_html` turn the tables of
:func:`delaycv.stats.learner_tests.run_tests`, :func:`delaycv.stats.bias.bias_tests` and
:func:`delaycv.stats.contrasts.policy_contrasts` into self-contained pages (no script, no external resource): one
section per metric and reference, the columns a reader needs with rounded numbers, significant
rows in bold. The CSV files keep every column at full precision. Pure: strings in, a string out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from html import escape

import pandas as pd

from delaycv.metrics.properties import direction_words, has_direction, higher_is_better, read_over
from delaycv.report import pages
from delaycv.stats.checkpoints import describe_at

#: the rules of this module's rows beside the pages' shared style (delaycv.report.pages)
_ROWS_STYLE = """
tr.sig td { font-weight: bold; }
p.direction { margin: 0.2em 0 0.5em; color: #444; }
td.note { white-space: normal; min-width: 24em; color: #555; }
"""


def _number(value, digits: int = 3, signed: bool = False) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def _p(value) -> str:
    if value is None or not math.isfinite(float(value)):
        return "n/a"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def _interval(mean, low, high) -> str:
    if not math.isfinite(float(mean)):
        return "n/a"
    if not (math.isfinite(float(low)) and math.isfinite(float(high))):
        return f"{_number(mean, signed=True)} [n/a]"
    return (
        f"{_number(mean, signed=True)} [{_number(low, signed=True)}, {_number(high, signed=True)}]"
    )


Column = tuple[str, Callable[[dict], str], bool]  # header, cell text (of a row's dict), numeric


def _table(rows: pd.DataFrame, columns: Sequence[Column], bold: pd.Series) -> str:
    head = [f"<th>{escape(h)}</th>" for h, _, _ in columns]
    body = []
    # rows as dicts, made column by column: a Series per row (iterrows) or pandas' own records
    # cost a page of every checkpoint most of its time
    names, values = list(rows.columns), [rows[name].tolist() for name in rows.columns]
    records = [dict(zip(names, row, strict=True)) for row in zip(*values, strict=True)]
    for row, strong in zip(records, bold, strict=True):
        cells = "".join(
            f'<td class="num">{escape(cell(row))}</td>'
            if numeric
            else (
                f'<td class="note">{escape(cell(row))}</td>'
                if header == "note"
                else f"<td>{escape(cell(row))}</td>"
            )
            for header, cell, numeric in columns
        )
        body.append(f'<tr class="sig">{cells}</tr>' if strong else f"<tr>{cells}</tr>")
    return pages.table(head, body)


def _page(title: str, intro: str, sections: Sequence[tuple[str, str]]) -> str:
    parts = pages.head(title, intro, _ROWS_STYLE)
    if not sections:
        parts.append("<p><em>The table is empty.</em></p>")
    for heading, table in sections:
        parts.append(f"<h2>{escape(heading)}</h2>")
        parts.append(table)
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _checkpoint(row: pd.Series) -> str:
    value = row["checkpoint"]
    return "none" if pd.isna(value) else str(int(value))


def _at_columns(frame: pd.DataFrame) -> list[Column]:
    """The column ``at`` (the requested position) when the request was positions or fractions
    (with ``last`` or ``all`` the checkpoint says it all), then the checkpoint."""
    at = frame["at"] if "at" in frame else pd.Series([], dtype=object)
    shown: list[Column] = []
    if not set(at.dropna()) <= {"last", "all"}:
        shown.append(("at", lambda r: str(r["at"]), False))
    shown.append(("checkpoint", _checkpoint, True))
    return shown


def _note_column(frame: pd.DataFrame) -> list[Column]:
    """The column ``note`` when a row with a checkpoint has one (a request answered by the next
    checkpoint, a policy that released no label, ...); rows without a checkpoint are listed apart
    (:func:`_split_gaps`)."""
    if "note" not in frame or frame.empty or not frame["note"].fillna("").astype(str).ne("").any():
        return []
    return [("note", lambda r: "" if pd.isna(r["note"]) else str(r["note"]), False)]


def _window(key: dict, effort_scope: str | None) -> str:
    """What a section's values are read over (:func:`~delaycv.metrics.properties.read_over`)."""
    return read_over(key["metric"], key["estimator"], effort_scope)


def _direction(metric: str, difference: str, a: str, b: str) -> str:
    """One line stating which way a difference points and which side its sign favours."""
    if not has_direction(metric):
        return (
            f'<p class="direction">{escape(difference)}: a positive value means {escape(a)} '
            f"scores higher than {escape(b)} ({escape(metric)} has no direction: neither is "
            "better).</p>"
        )
    up = higher_is_better(metric)
    better = "higher" if up else "lower"
    return (
        f'<p class="direction">{escape(difference)}: a positive value means {escape(a)} '
        f"scores higher than {escape(b)}, which favours {escape(a if up else b)} ({escape(metric)}: "
        f"{better} is better).</p>"
    )


def _split_gaps(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[tuple[str, str]]]:
    """The rows with a test, and a section listing the requested positions no stream reaches
    (rows of :func:`delaycv.stats.checkpoints.label_checkpoints` with a note and no checkpoint)."""
    if "note" not in frame or frame.empty:
        return frame, []
    gap = frame["checkpoint"].isna() & frame["note"].astype(str).ne("")
    if not gap.any():
        return frame, []
    columns: list[Column] = [
        ("dataset", lambda r: str(r["dataset"]), False),
        ("at", lambda r: str(r["at"]), False),
        ("note", lambda r: str(r["note"]), False),
    ]
    rows = frame[gap]
    table = _table(rows, columns, pd.Series(False, index=rows.index))
    return frame[~gap], [("Requested positions with no checkpoint (no test)", table)]


def _hoist(frame: pd.DataFrame, shared_note: str | None) -> tuple[pd.DataFrame, str]:
    """``frame`` without ``shared_note`` in its rows' notes (it ends them:
    :func:`~delaycv.stats.checkpoints.note_out_of_reach` joins it last), and
    the paragraph that says it once, above the tables; ``frame`` and "" without one."""
    if not shared_note or "note" not in frame:
        return frame, ""
    notes = frame["note"].fillna("").astype(str)
    notes = notes.str.replace(f"; {shared_note}", "", regex=False)
    notes = notes.str.replace(shared_note, "", regex=False)
    paragraph = f"</p><p><b>No test on this page can be significant:</b> {escape(shared_note)}."
    return frame.assign(note=notes), paragraph


def _groups(frame: pd.DataFrame, keys: Sequence[str], metrics: Sequence[str] | None):
    """Sections in order of first appearance, metrics in the order of ``metrics`` when given."""
    if frame.empty:
        return []
    # one pass over the rows (a mask per section made a page of every checkpoint quadratic)
    grouped = frame.groupby(list(keys), sort=False, observed=True)
    out = [(dict(zip(keys, values, strict=True)), rows) for values, rows in grouped]
    if metrics is not None:
        rank = {m: i for i, m in enumerate(metrics)}
        out.sort(key=lambda section: rank.get(section[0]["metric"], len(rank)))  # (stable)
    return out


def tests_html(
    tests: pd.DataFrame,
    *,
    title: str,
    metrics: Sequence[str] | None = None,
    effort_scope: str | None = None,
    shared_note: str | None = None,
) -> str:
    """A page of the pairwise learner tests (:func:`delaycv.stats.learner_tests.run_tests`): one section per
    (metric, reference, estimator), in the order of ``metrics`` when given, one row per (policy,
    checkpoint, learner pair) in the table's order; significant rows in bold. Requested positions
    beyond a stream are listed at the end. ``effort_scope``: the scope of the effort-aware
    measures, named in their sections' headings. ``shared_note``: a note every tested row carries
    (that no test can be significant, :func:`~delaycv.stats.checkpoints.shared_note`), said once
    above the tables instead of in each row."""
    tests, gaps = _split_gaps(tests)
    tests, shared = _hoist(tests, shared_note)
    columns: list[Column] = [
        ("policy", lambda r: str(r["policy"]), False),
        *_at_columns(tests),
        ("learner a", lambda r: str(r["learner_a"]), False),
        ("learner b", lambda r: str(r["learner_b"]), False),
        ("n", lambda r: str(int(r["n"])), True),
        ("mean a", lambda r: _number(r["mean_a"]), True),
        ("mean b", lambda r: _number(r["mean_b"]), True),
        ("a − b [95 % CI]", lambda r: _interval(r["mean_diff"], r["ci_low"], r["ci_high"]), True),
        ("Cliff's δ", lambda r: _number(r["cliffs_delta"], 2, signed=True), True),
        ("p", lambda r: _p(r["p_value"]), True),
        ("p (Holm)", lambda r: _p(r["p_holm"]), True),
        ("result", _result, False),
        ("Wilcoxon p", lambda r: _p(r["wilcoxon_p"]), True),
        ("sign test p", lambda r: _p(r["sign_p"]), True),
        *_note_column(tests),
    ]
    sections = []
    for key, rows in _groups(tests, ["metric", "reference", "estimator"], metrics):
        heading = (
            f"{key['metric']} on {key['reference']} labels ({_window(key, effort_scope)}; "
            f"{direction_words(key['metric'])})"
        )
        direction = _direction(key["metric"], "a − b and Cliff's δ", "learner a", "learner b")
        sections.append(
            (heading, direction + _table(rows, columns, rows["significant"].astype(bool)))
        )
    intro = (
        "Paired permutation tests between two learners over the (seed, fold) pairs, "
        "d = a − b. <b>Bold</b>: significant after Holm's adjustment within the family (dataset, "
        "policy, estimator, reference, checkpoint, metric); <i>result</i> names the better "
        "learner then, by the mean difference and the metric's direction (each section says which "
        "way its numbers point). Wilcoxon and sign-test p-values are unadjusted companions. "
        + _READING
        + " Every column at full precision: tests.csv."
        + shared
    )
    return _page(title, intro, sections + gaps)


#: What a reader needs to read p, the interval and Cliff's δ of one row together
#: (docs/comparison.md, "Reading a row").
_READING = (
    "p comes from the sign-flip permutation test, the interval is a t-interval of the mean "
    "difference: two methods that can disagree. When every pair points the same way the "
    "permutation p is the smallest the n pairs allow (2/2<sup>n</sup>: 0.002 for 10 pairs), "
    "whatever the sizes, while one large difference among small ones widens the t-interval "
    "past 0. Cliff's δ compares every value of one side with every value of the other, "
    "unpaired: it can have the other sign than the mean paired difference (a few large "
    "differences against many small ones the other way); the verdict follows the mean "
    "difference."
)


def _result(row: pd.Series) -> str:
    if not math.isfinite(float(row["p_holm"])):
        return "no test"
    if not row["significant"]:
        return "n.s."
    if row["result"] in ("higher", "lower"):  # a metric without a direction
        return f"{row['learner_a']} {row['result']}"
    return f"{row['better']} better"


def bias_html(
    bias: pd.DataFrame,
    *,
    title: str,
    alpha: float,
    metrics: Sequence[str] | None = None,
    effort_scope: str | None = None,
    shared_note: str | None = None,
) -> str:
    """A page of the bias of realistic evaluation (:func:`delaycv.stats.bias.bias_tests`): one section
    per (metric, estimator, estimate), in the order of ``metrics`` when given, one row per
    (policy, checkpoint, learner); a row is bold, and read as optimistic (the estimate overstates
    the learner) or pessimistic, when its Holm-adjusted p is at most ``alpha``. The estimate is
    the observed labels' value, or the corrected one (what the correction leaves of the bias).
    ``shared_note``: as in :func:`tests_html`."""

    def reading(row: pd.Series) -> str:
        p = float(row["p_holm"])
        if not math.isfinite(p):
            return "no test"
        if p > alpha or row["mean_bias"] == 0:
            return "n.s."
        if not has_direction(row["metric"]):  # neither optimistic nor pessimistic
            side = str(row.get("estimate", "observed"))
            return f"{side} higher" if row["mean_bias"] > 0 else f"{side} lower"
        overstated = (row["mean_bias"] > 0) == higher_is_better(row["metric"])
        return "optimistic" if overstated else "pessimistic"

    bias, gaps = _split_gaps(bias)
    bias, shared = _hoist(bias, shared_note)
    columns: list[Column] = [
        ("policy", lambda r: str(r["policy"]), False),
        *_at_columns(bias),
        ("learner", lambda r: str(r["learner"]), False),
        ("n", lambda r: str(int(r["n"])), True),
        (
            "estimate − true [95 % CI]",
            lambda r: _interval(r["mean_bias"], r["ci_low"], r["ci_high"]),
            True,
        ),
        ("p", lambda r: _p(r["p_value"]), True),
        ("p (Holm)", lambda r: _p(r["p_holm"]), True),
        ("reading", reading, False),
        *_note_column(bias),
    ]
    sections = []
    if "estimate" not in bias.columns:  # a table written before the corrected reference
        bias = bias.assign(estimate="observed")
    for key, rows in _groups(bias, ["metric", "estimator", "estimate"], metrics):
        estimate = str(key["estimate"])
        heading = (
            f"{key['metric']}, {estimate} − true ({_window(key, effort_scope)}; "
            f"{direction_words(key['metric'])})"
        )
        labels, verb = (
            ("observed labels", "score")
            if estimate == "observed"
            else ("corrected estimate", "scores")
        )
        if has_direction(key["metric"]):
            up = higher_is_better(key["metric"])
            direction = (
                f'<p class="direction">{estimate} − true: a positive value means the {labels} '
                f"{verb} the learner higher than the true labels, which is "
                f"{'optimistic' if up else 'pessimistic'} ({escape(key['metric'])}: "
                f"{'higher' if up else 'lower'} is better).</p>"
            )
        else:
            direction = _direction(key["metric"], f"{estimate} − true", f"the {labels}", "true")
        bold = rows.apply(lambda r: reading(r) not in ("n.s.", "no test"), axis=1)
        sections.append((heading, direction + _table(rows, columns, bold.astype(bool))))
    intro = (
        "Bias of realistic evaluation: per learner, the mean over the (seed, fold) pairs of the "
        "value scored against the observed labels minus the value scored against the true labels, "
        "with a sign-flip permutation test of zero mean bias, Holm-adjusted over the learners of "
        f"each (policy, checkpoint, metric). <b>Bold</b>: p (Holm) ≤ α = {alpha:g}; "
        "<i>optimistic</i>: the observed labels overstate the learner's true performance. "
        "The sections of the corrected estimate (the true-label value estimated from what a "
        "practitioner knows: corrected − true) show what the correction leaves of the bias. "
        "Every column at full precision: bias.csv." + shared
    )
    return _page(title, intro, sections + gaps)


def _family_heading(key: dict, effort_scope: str | None = None) -> str:
    ranked = "learners" if key["ranked"] == "learner" else "policies"
    where = f"{key['dataset']}: " if "dataset" in key else ""
    return (
        f"{where}{key['metric']} on {key['reference']} labels at {describe_at(key['at'])}: {ranked} within "
        f"{key['within']} ({_window(key, effort_scope)}; {direction_words(key['metric'])})"
    )


def rankings_html(
    friedman: pd.DataFrame | None = None,
    scott_knott: pd.DataFrame | None = None,
    *,
    title: str,
    metrics: Sequence[str] | None = None,
    effort_scope: str | None = None,
) -> str:
    """A page of the rankings of :func:`delaycv.stats.families.rank_across` (its ``friedman`` and
    ``scott_knott`` tables) or of :func:`delaycv.stats.families.rank_within` (``scott_knott`` alone, one
    section per dataset too): one section per family (what is ranked, within which learner or
    policy, reference, estimator, position, metric), in the order of ``metrics`` when given, its
    test (Friedman's chi2, p, N, CD) or the note that replaces it, and one row per treatment:
    mean rank and rank (Friedman), mean over datasets, Scott-Knott ESD group and median (or mean),
    best first. Rows of the best Scott-Knott ESD group are bold."""
    if friedman is None and scott_knott is None:
        raise ValueError("rankings_html needs a friedman or a scott_knott table")
    keys = ["ranked", "within", "reference", "estimator", "at", "metric"]
    if scott_knott is not None and "dataset" in scott_knott.columns:
        keys.append("dataset")
    average = None
    if scott_knott is not None:
        average = "median" if "median" in scott_knott.columns else "mean"
    merged = _rankings_rows(friedman, scott_knott, keys, average)
    columns = _rankings_columns(friedman, scott_knott, average)
    sections = []
    for key, rows in _groups(merged, keys, metrics):
        rows, absent = _unranked_last(rows)
        test = _family_test(rows, across=friedman is not None)
        if friedman is None and "group" in rows:
            rows = rows.sort_values(["rank", "treatment"], kind="stable", na_position="last")
        best = rows["group"].eq(1).fillna(False).astype(bool) if scott_knott is not None else None
        bold = best if best is not None else pd.Series(False, index=rows.index)
        sections.append(
            (_family_heading(key, effort_scope), test + absent + _table(rows, columns, bold))
        )
    intro = _ACROSS_INTRO if friedman is not None else _WITHIN_INTRO
    return _page(title, intro, sections)


def _rankings_rows(friedman, scott_knott, keys: list[str], average: str | None) -> pd.DataFrame:
    """One row per (family, treatment): the Friedman table with the Scott-Knott ESD group and
    average beside it (``sk_average``), or either table alone."""
    if friedman is not None and scott_knott is not None:
        sk = scott_knott[[*keys, "treatment", "group", average]]
        return friedman.merge(
            sk.rename(columns={average: "sk_average"}), on=[*keys, "treatment"], how="left"
        )
    if friedman is not None:
        return friedman.assign(group=pd.NA, sk_average=math.nan)
    return scott_knott.rename(columns={average: "sk_average"})


def _integer(value) -> str:
    return "–" if pd.isna(value) else str(int(value))


def _rankings_columns(friedman, scott_knott, average: str | None) -> list[Column]:
    """The columns of a rankings table: Friedman's (mean rank, place, mean over datasets) when
    there is a Friedman table, Scott-Knott ESD's (group, average; within datasets also the place
    by the average, the mean rank over pairs and the number of pairs)."""
    columns: list[Column] = [("treatment", lambda r: str(r["treatment"]), False)]
    if friedman is not None:
        columns += [
            ("mean rank over datasets", lambda r: _number(float(r["mean_rank"]), 2), True),
            ("place by mean rank", lambda r: _integer(r["rank"]), True),
            ("mean over datasets", lambda r: _number(float(r["mean"])), True),
        ]
    if scott_knott is not None:
        columns += [("SK-ESD group", lambda r: _integer(r["group"]), True)]
        columns += [(f"{average} (SK-ESD)", lambda r: _number(float(r["sk_average"])), True)]
        if friedman is None:
            # SK-ESD's own order is by median (mean for p); the mean rank over the pairs is
            # another view, and may order two treatments the other way
            columns += [
                (f"place by {average}", lambda r: _integer(r["rank"]), True),
                (
                    "mean rank over (seed, fold) pairs",
                    lambda r: _number(float(r["mean_rank"]), 2),
                    True,
                ),
                ("pairs", lambda r: _integer(r["n"]), True),
            ]
    return columns


def _unranked_last(rows: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """A family's rows with the treatments that have no value at all (not ranked) last, and the
    paragraph that says why each is not ranked (apart from the family's own note: fewer than 3
    datasets, ...); the rows unchanged and no paragraph when every treatment is ranked."""
    unranked = rows["note"].fillna("").astype(str).str.endswith("not ranked")
    if not unranked.any():
        return rows, ""
    reasons: dict[str, list[str]] = {}
    gone = rows[unranked]
    for treatment, note in zip(gone["treatment"], gone["note"], strict=True):
        reasons.setdefault(str(note).removesuffix(": not ranked"), []).append(treatment)
    absent = "".join(
        f"<p><em>Not ranked: {escape(', '.join(map(str, names)))} ({escape(why)}).</em></p>"
        for why, names in reasons.items()
    )
    if (~unranked).any():
        rows = pd.concat([rows[~unranked], rows[unranked]])
    return rows, absent


def _family_test(rows: pd.DataFrame, *, across: bool) -> str:
    """The paragraph of a family's test: the note that replaces it, nothing when no treatment is
    ranked, Friedman's statistic and Nemenyi's CD (``across`` datasets) or the number of pairs
    of Scott-Knott ESD (within a dataset). ``rows`` has its unranked treatments last."""
    unranked = rows["note"].fillna("").astype(str).str.endswith("not ranked")
    first = rows.iloc[0]
    if unranked.all():
        return ""
    grouped = not across and pd.notna(first.get("group"))
    if first["note"] and not grouped:
        return f"<p><em>No test: {escape(str(first['note']))}.</em></p>"
    if across:
        how = "exact" if bool(first["permutation_exact"]) else "random"
        return (
            f"<p>Friedman chi2 = {_number(float(first['statistic']), 2)}, "
            f"p = {escape(_p(first['p_value']))} (chi-square), "
            f"{escape(_p(first['p_permutation']))} (permutation, {how}), "
            f"N = {int(first['n'])} datasets, "
            f"k = {int(first['k'])}; Nemenyi's critical difference CD = "
            f"{_number(float(first['cd']), 2)}: mean ranks further apart differ.</p>"
        )
    # (a note beside the groups: pairs left out, or counted once, before the test)
    said = f" ({escape(str(first['note']))})" if first["note"] else ""
    return f"<p>Scott-Knott ESD over {_integer(first['n'])} (seed, fold) pairs{said}.</p>"


_ACROSS_INTRO = (
    "Rankings across datasets: in each family the block is a dataset and a treatment's "
    "value there is its mean over folds and seeds. Rank 1 = best, by the metric's "
    "direction. <i>Mean rank over datasets</i>: the treatment's rank among the family's "
    "treatments, averaged over the datasets; <i>place by mean rank</i>: its position "
    "when the family is sorted by that mean rank (rows are in that order). Friedman's "
    "test with Nemenyi's post-hoc: two treatments differ when their mean ranks differ by "
    "more than CD. Friedman's p by the chi-square approximation (as scipy and R compute "
    "it) is reliable from about 10 datasets; the permutation p is that of the same "
    "statistic when each dataset's values are exchanged among the treatments: exact over "
    "every permutation when there are at most <code>tests.resamples</code>, else from "
    "that many random ones. Scott-Knott ESD (ScottKnottESD v3) over the same per-dataset values: "
    "treatments of one group are not told apart, group 1 is the best; <b>bold</b>: group "
    "1. A note replaces the tests when a family has fewer than 3 datasets or a missing "
    "value, and names a treatment that has no value (e.g. a policy that released no "
    "label before the end of the stream)."
)
_WITHIN_INTRO = (
    "Scott-Knott ESD (ScottKnottESD v3) within each dataset: in each family (per "
    "dataset) a treatment's observations are its values at the (seed, fold) pairs. "
    "Rows are in Scott-Knott ESD's order, best first: by median (by mean for version "
    "p), the <i>place by median</i>; treatments of one group are not told apart, group 1 "
    "is the best; <b>bold</b>: group 1. <i>Mean rank over (seed, fold) pairs</i> is "
    "another view: the treatment's rank within each pair, averaged over the pairs (1 = "
    "best). It can order two treatments the other way than their medians (a treatment "
    "with the better median may lose more pairs), and it does not decide the groups. A "
    "note replaces the groups when a family has a single treatment or too few complete "
    "pairs, says beside them which pairs were left out (a treatment without a value) or "
    "counted once (a seed that repeats an earlier seed's values), and names a treatment "
    "that has no value (e.g. a policy that released no label before the end of the stream)."
)


def contrasts_html(
    contrasts: pd.DataFrame,
    *,
    title: str,
    alpha: float,
    metrics: Sequence[str] | None = None,
    effort_scope: str | None = None,
    shared_note: str | None = None,
) -> str:
    """A page of the policy contrasts (:func:`delaycv.stats.contrasts.policy_contrasts`): one section
    per (metric, contrast, estimator), in the order of ``metrics`` when given, the estimate's
    contrast before the true value's; one row per (learner, checkpoint, policy); a row is bold, and
    read as *worse* or *better* than the reference policy by the metric's direction, when its
    Holm-adjusted p is at most ``alpha``. Requested positions beyond a stream are listed at the
    end. ``shared_note``: as in :func:`tests_html`."""
    contrasts, gaps = _split_gaps(contrasts)
    contrasts, shared = _hoist(contrasts, shared_note)

    def reading(row: pd.Series) -> str:
        p = float(row["p_holm"])
        if not math.isfinite(p):
            return "no test"
        if p > alpha or row["difference"] == 0:
            return "n.s."
        if not has_direction(row["metric"]):
            return (
                f"{'higher' if row['difference'] > 0 else 'lower'} than {row['reference_policy']}"
            )
        above = (row["difference"] > 0) == higher_is_better(row["metric"])
        return f"{'better' if above else 'worse'} than {row['reference_policy']}"

    columns = _contrast_columns(contrasts, reading)
    ordered = contrasts.sort_values(
        "reference", key=lambda c: c.map({"observed": 0, "true": 1}), kind="stable"
    )
    sections = []
    for key, rows in _groups(ordered, ["metric", "reference", "estimator"], metrics):
        reference_policy = str(rows["reference_policy"].iloc[0])
        bold = rows.apply(lambda r: reading(r) not in ("n.s.", "no test"), axis=1)
        direction = _direction(
            key["metric"], "policy − reference and Cliff's δ", "the policy", reference_policy
        )
        table = _table(rows, columns, bold.astype(bool))
        sections.append((_contrast_heading(key, rows, effort_scope), direction + table))
    intro = (
        "Every label policy against the reference policy, paired by (seed, fold): a fold's "
        "training weights and learner seed do not depend on the policy. <i>Estimate vs R</i>: the "
        "policy's observed-label value (what a study under the policy reports) minus R's "
        "true-label value; <i>true value vs R</i>: the policy's true-label value minus R's. "
        "Validity = 100 − |difference| with the metric in percent (the HITL study's measure; "
        "n/a for metrics that are not fractions). p: paired sign-flip permutation test; Holm over "
        f"the policies of each (learner, checkpoint, contrast, metric). <b>Bold</b>: p (Holm) ≤ "
        f"α = {alpha:g}. {_READING} Every column at full precision: contrasts.csv." + shared
    )
    return _page(title, intro, sections + gaps)


def _validity(row: pd.Series) -> str:
    value = float(row["validity"])
    return f"{value:.1f}" if math.isfinite(value) else "n/a"


def _contrast_columns(contrasts: pd.DataFrame, reading) -> list[Column]:
    """The columns of a contrasts table, ``reading`` the row's verdict."""
    return [
        ("learner", lambda r: str(r["learner"]), False),
        *_at_columns(contrasts),
        ("policy", lambda r: str(r["policy"]), False),
        ("n", lambda r: str(int(r["n"])), True),
        ("mean policy", lambda r: _number(r["mean_policy"]), True),
        ("mean reference", lambda r: _number(r["mean_reference_policy"]), True),
        (
            "policy − reference [95 % CI]",
            lambda r: _interval(r["difference"], r["ci_low"], r["ci_high"]),
            True,
        ),
        ("validity (%)", _validity, True),
        ("Cliff's δ", lambda r: _number(r["cliffs_delta"], 2, signed=True), True),
        ("p", lambda r: _p(r["p_value"]), True),
        ("p (Holm)", lambda r: _p(r["p_holm"]), True),
        ("reading", reading, False),
        *_note_column(contrasts),
    ]


#: what each contrast measures, by the label its estimate is computed against
_CONTRAST_MEANING = {
    "observed": "the policy's observed-label estimate minus {r}'s true value, the evaluation's "
    "error plus the model's loss",
    "true": "the policy's true value minus {r}'s, what the delay costs the model alone",
    "corrected": "the policy's corrected estimate minus {r}'s true value, what a practitioner "
    "under the policy would conclude with the correction (against the true value's row)",
}


def _contrast_heading(key: dict, rows: pd.DataFrame, effort_scope: str | None = None) -> str:
    """A contrasts section's heading: the metric, the contrast, what it measures, the estimator
    (an effort-aware measure's scope) and the metric's direction."""
    reference_policy = str(rows["reference_policy"].iloc[0])
    return (
        f"{key['metric']}: {rows['contrast'].iloc[0]} — "
        f"{_CONTRAST_MEANING[key['reference']].format(r=reference_policy)} "
        f"({_window(key, effort_scope)}; {direction_words(key['metric'])})"
    )
