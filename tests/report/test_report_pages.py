"""HTML pages of the test and bias tables (delaycv.report.statistics), as the workflow's report shows them."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from delaycv.report import statistics
from delaycv.stats.bias import bias_tests
from delaycv.stats.learner_tests import run_tests
from tests.support.fold_tables import fold_table, hand_table, two_streams


class Tables(HTMLParser):
    """The sections (h2 text) and their rows (cell texts, bold or not) of a page."""

    def __init__(self, page: str):
        super().__init__()
        self.sections: list[tuple[str, list[str], list[tuple[bool, list[str]]]]] = []
        self._tag = None
        self._text = ""
        self._row = None
        self._bold = False
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        if tag in ("h2", "td", "th"):
            self._tag, self._text = tag, ""
        elif tag == "tr":
            self._row, self._bold = [], ("class", "sig") in attrs

    def handle_data(self, data):
        if self._tag:
            self._text += data

    def handle_endtag(self, tag):
        if tag == "h2":
            self.sections.append((self._text, [], []))
        elif tag == "th":
            self.sections[-1][1].append(self._text)
        elif tag == "td":
            self._row.append(self._text)
        elif tag == "tr" and self._row:
            self.sections[-1][2].append((self._bold, self._row))
        if tag in ("h2", "td", "th"):
            self._tag = None


@pytest.fixture(scope="module")
def tests():
    table = fold_table(
        learners={"ht": 0.05, "nb": 0.0, "same": 0.0},
        policies={"ideal": 0.0, "hitl_7d_90d": 0.04},
        folds=8,
        checkpoints=3,
    )
    return run_tests(table, metrics=["brier", "accuracy"], checkpoints="last", resamples=200)


def test_tests_page_has_a_readable_section_per_metric_and_reference(tests):
    page = statistics.tests_html(
        tests, title="Pairwise learner tests: dataset synth", metrics=["brier", "accuracy"]
    )
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page and "http" not in page
    parsed = Tables(page)
    headings = [h for h, _, _ in parsed.sections]
    # sections follow the metrics as configured, not the table's (alphabetical) order
    assert headings == [
        "brier on observed labels (fading estimator; lower is better)",
        "brier on true labels (fading estimator; lower is better)",
        "accuracy on observed labels (fading estimator; higher is better)",
        "accuracy on true labels (fading estimator; higher is better)",
    ]
    assert [h for h, _, _ in Tables(statistics.tests_html(tests, title="t")).sections][
        0
    ].startswith("accuracy on observed")
    _, head, rows = parsed.sections[2]
    assert head[:4] == ["policy", "checkpoint", "learner a", "learner b"]
    sub = tests[(tests.metric == "accuracy") & (tests.reference == "observed")]
    assert len(rows) == len(sub) == 2 * 3
    for (bold, cells), row in zip(rows, sub.itertuples(), strict=True):
        cell = dict(zip(head, cells, strict=True))
        assert cell["policy"] == row.policy and cell["learner a"] == row.learner_a
        assert cell["n"] == "8"
        assert cell["mean a"] == f"{row.mean_a:.3f}"
        assert cell["a − b [95 % CI]"] == (
            f"{row.mean_diff:+.3f} [{row.ci_low:+.3f}, {row.ci_high:+.3f}]"
        )
        assert bold == bool(row.significant)
        assert cell["result"] == (f"{row.better} better" if row.significant else "n.s.")
        p = row.p_holm
        assert cell["p (Holm)"] == ("< 0.001" if p < 0.001 else f"{p:.3f}")
    # ht is 0.05 better than both others: significant and bold; nb and "same" are not apart
    by_pair = {(c[0], c[2], c[3]): (b, c) for b, c in rows}
    assert (
        by_pair[("ideal", "ht", "nb")][0] and by_pair[("ideal", "ht", "nb")][1][11] == "ht better"
    )
    assert by_pair[("ideal", "nb", "same")][1][11] == "n.s."


def test_pages_escape_names_and_show_missing_values():
    tests = pd.DataFrame(
        {
            "dataset": ["d"],
            "policy": ["<script>"],
            "estimator": ["fading"],
            "reference": ["true"],
            "checkpoint": [10],
            "metric": ["gmean"],
            "learner_a": ["a&b"],
            "learner_b": ["c"],
            "n": [0],
            "mean_a": [np.nan],
            "mean_b": [np.nan],
            "mean_diff": [np.nan],
            "ci_low": [np.nan],
            "ci_high": [np.nan],
            "cliffs_delta": [np.nan],
            "p_value": [np.nan],
            "p_holm": [np.nan],
            "significant": [False],
            "better": [""],
            "wilcoxon_p": [np.nan],
            "sign_p": [np.nan],
        }
    )
    page = statistics.tests_html(tests, title="x < y")
    assert "<script>" not in page and "&lt;script&gt;" in page and "a&amp;b" in page
    assert "<title>x &lt; y</title>" in page
    ((_, head, rows),) = Tables(page).sections
    cell = dict(zip(head, rows[0][1], strict=True))
    assert cell["mean a"] == "n/a" and cell["a − b [95 % CI]"] == "n/a"
    assert cell["result"] == "no test"
    assert "The table is empty" in statistics.tests_html(tests.iloc[:0], title="t")


def bias_rows(metric, biases, p_holm):
    n = len(biases)
    return pd.DataFrame(
        {
            "dataset": ["d"] * n,
            "policy": ["hitl_7d_90d"] * n,
            "estimator": ["fading"] * n,
            "checkpoint": [100] * n,
            "learner": [f"l{i}" for i in range(n)],
            "metric": [metric] * n,
            "n": [10] * n,
            "mean_bias": biases,
            "ci_low": [b - 0.01 for b in biases],
            "ci_high": [b + 0.01 for b in biases],
            "p_value": p_holm,
            "exact": [True] * n,
            "p_holm": p_holm,
        }
    )


def test_bias_page_reads_the_direction_of_significant_biases():
    bias = pd.concat(
        [
            bias_rows("gmean", [0.04, -0.03, 0.02], [0.01, 0.02, 0.2]),
            bias_rows("brier", [0.04, -0.03, 0.0], [0.01, 0.02, 1.0]),
        ],
        ignore_index=True,
    )
    parsed = Tables(statistics.bias_html(bias, title="bias", alpha=0.05))
    assert [h for h, _, _ in parsed.sections] == [
        "gmean, observed − true (fading estimator; higher is better)",
        "brier, observed − true (fading estimator; lower is better)",
    ]
    readings = {
        h.split(",")[0]: [(bold, cells[-1]) for bold, cells in rows]
        for h, _, rows in parsed.sections
    }
    # gmean: observed above true overstates (optimistic); brier (a loss): observed below true does
    assert readings["gmean"] == [(True, "optimistic"), (True, "pessimistic"), (False, "n.s.")]
    assert readings["brier"] == [(True, "pessimistic"), (True, "optimistic"), (False, "n.s.")]
    _, head, rows = parsed.sections[0]
    assert dict(zip(head, rows[0][1], strict=True))["estimate − true [95 % CI]"] == (
        "+0.040 [+0.030, +0.050]"
    )
    assert re.search(r"α = 0\.05", statistics.bias_html(bias, title="b", alpha=0.05))


def test_contrasts_page_reads_each_policy_against_the_reference():
    from delaycv.stats.contrasts import policy_contrasts

    contrasts = policy_contrasts(hand_table(), metrics=["gmean", "tp"])
    page = statistics.contrasts_html(
        contrasts, title="contrasts", alpha=0.2, metrics=["gmean", "tp"]
    )
    parsed = Tables(page)
    headings = [h for h, _, _ in parsed.sections]
    assert [h.split(" — ")[0] for h in headings] == [
        "gmean: estimate vs ideal",
        "gmean: true value vs ideal",
        "tp: estimate vs ideal",
        "tp: true value vs ideal",
    ]
    assert "the evaluation's error plus the model's loss" in headings[0]
    assert "what the delay costs the model alone" in headings[1]
    # a table with the corrected reference: its section says what it measures too
    table = hand_table()
    both = pd.concat([table, table[table.reference == "true"].assign(reference="corrected")])
    corrected = Tables(
        statistics.contrasts_html(policy_contrasts(both, metrics=["gmean"]), title="c", alpha=0.2)
    )
    (heading,) = [h for h, _, _ in corrected.sections if h.startswith("gmean: corrected")]
    assert heading.startswith(
        "gmean: corrected estimate vs ideal — the policy's corrected estimate minus ideal's true "
        "value, what a practitioner under the policy would conclude with the correction"
    ), heading
    _, head, rows = parsed.sections[0]
    assert head[:3] == ["learner", "checkpoint", "policy"]  # no "at" column for "last"
    ((bold, cells),) = rows
    cell = dict(zip(head, cells, strict=True))
    assert cell["policy − reference [95 % CI]"].startswith("-0.100 [")
    assert cell["validity (%)"] == "90.0" and cell["p"] == "0.125"
    # p (Holm) 0.125 <= alpha 0.2: bold, and worse than ideal (gmean: higher is better)
    assert bold and cell["reading"] == "worse than ideal"
    tp = dict(zip(parsed.sections[2][1], parsed.sections[2][2][0][1], strict=True))
    assert tp["validity (%)"] == "n/a"
    # requested positions: an "at" column, and the position beyond a stream listed at the end
    spec = {"positions": [1000, 2000]}
    table = two_streams()
    for page in (
        statistics.contrasts_html(
            policy_contrasts(table, metrics=["gmean"], checkpoints=spec, resamples=100),
            title="c",
            alpha=0.05,
        ),
        statistics.tests_html(
            run_tests(table, metrics=["gmean"], checkpoints=spec, resamples=100), title="t"
        ),
        statistics.bias_html(
            bias_tests(table, metrics=["gmean"], checkpoints=spec, resamples=100),
            title="b",
            alpha=0.05,
        ),
    ):
        sections = Tables(page).sections
        assert "at" in sections[0][1]
        last, head, rows = sections[-1]
        assert last == "Requested positions with no checkpoint (no test)"
        assert [cells for _, cells in rows] == [
            [
                "short",
                "position_2000",
                "requested position 2000: beyond the stream (n = 1200), no test",
            ]
        ]


def test_a_note_every_test_carries_is_said_once_above_the_tables():
    """4 folds: no test can be significant, and every row's note says so; the page says it once,
    above its tables, and keeps the rest of each note (a request answered by a later
    checkpoint); with 6 folds, no such paragraph."""
    from delaycv.stats.checkpoints import shared_note
    from delaycv.stats.contrasts import policy_contrasts

    table = two_streams()  # 4 folds; long: checkpoints 500 .. 3000, short: 500, 1000, 1200
    tests = run_tests(table, metrics=["gmean"], checkpoints={"positions": [1200]})
    note = shared_note(tests, alpha=0.05, resamples=5000)
    assert note.startswith("4 (seed, fold) pairs: no p below 0.125 (2/2^4) is possible")
    page = statistics.tests_html(tests, title="t", shared_note=note)
    text = " ".join(page.split())
    assert f"<b>No test on this page can be significant:</b> {note}." in text
    assert text.count(note) == 1
    # the other part of a row's note stays in its row
    assert "requested position 1200, tested at checkpoint 1500 (the next checkpoint)</td>" in text
    contrasts = policy_contrasts(table, metrics=["gmean"])
    note = shared_note(contrasts, alpha=0.05, resamples=5000)
    page = statistics.contrasts_html(contrasts, title="c", alpha=0.05, shared_note=note)
    assert "<th>note</th>" not in page and "No test on this page can be significant" in page
    six = run_tests(fold_table(folds=6), metrics=["gmean"])
    assert shared_note(six, alpha=0.05, resamples=5000) == ""
    assert "No test on this page" not in statistics.tests_html(six, title="t", shared_note="")


def sections_by_masks(frame, keys, metrics):
    """The sections of a page as a mask per section made them (the definition: the key values
    in order of first appearance, metrics in the order of ``metrics``; each section's rows in
    the table's order)."""
    order = frame[list(keys)].drop_duplicates()
    if metrics is not None:
        rank = {m: i for i, m in enumerate(metrics)}
        order = order.sort_values(
            "metric", key=lambda col: col.map(lambda m: rank.get(m, len(rank))), kind="stable"
        )
    out = []
    for values in order.itertuples(index=False):
        mask = pd.Series(True, index=frame.index)
        for key, value in zip(keys, values, strict=True):
            mask &= frame[key] == value
        out.append((dict(zip(keys, values, strict=True)), frame[mask]))
    return out


@pytest.mark.parametrize("seed", range(5))
def test_sections_are_grouped_in_one_pass_as_by_a_mask_each(seed):
    """A page's sections (one pass over the rows, so that a page of every checkpoint is not
    quadratic in its sections) are those a mask per section gives, in the same order, with the
    same rows in the same order; metrics not listed come last."""
    rng = np.random.default_rng(seed)
    n = 300
    frame = pd.DataFrame(
        {
            "metric": rng.choice(["gmean", "recall_1", "fpr_1", "brier"], n),
            "reference": pd.array(rng.choice(["observed", "true"], n), dtype="string"),
            "at": rng.choice(["checkpoint_500", "checkpoint_1000", "last"], n),
            "value": rng.normal(size=n),
        }
    )
    keys = ["metric", "reference", "at"]
    for metrics in (None, ["recall_1", "gmean"]):
        got = statistics._groups(frame, keys, metrics)
        want = sections_by_masks(frame, keys, metrics)
        assert [key for key, _ in got] == [key for key, _ in want]
        for (_, a), (_, b) in zip(got, want, strict=True):
            pd.testing.assert_frame_equal(a, b)
