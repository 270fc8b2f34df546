"""Scott-Knott ESD's groups against R: the groups R's ScottKnottESD 3.0.0 prints for its ``np`` version (named in
mean order) against the partition's own (median order)."""

import pandas as pd
import pytest

from delaycv.common.errors import DelaycvError
from delaycv.stats import replication as rep
from delaycv.stats.scott_knott import r_np_group_names, scott_knott_esd

# A: median 0, mean 20; B: median 5, mean 5; C: median 1, mean 1.
SMALLEST = pd.DataFrame({"A": [0.0, 0, 0, 0, 100], "B": [5.0] * 5, "C": [1.0] * 5})


def groups_of(table: pd.DataFrame, column: str) -> dict:
    return dict(zip(table["treatment"], table[column], strict=True))


def test_smallest_case_r_names_groups_in_mean_order():
    # Median order B (5), C (1), A (0). Whole segment: Cliff's delta(B, A) = (20 - 5)/25 = 0.6,
    # not negligible, cut. Ranks of the 15 values: 0 x4 -> 2.5, 1 x5 -> 7, 5 x5 -> 12, 100 -> 15;
    # rank sums B 60, C 35, A 25. Cut after B: 60^2/5 + 60^2/10 = 1080; after C: 95^2/10 + 25^2/5
    # = 1027.5; so {B} | {C, A}. {C, A}: delta(C, A) = 0.6, cut: {C}, {A}. Groups B 1, C 2, A 3.
    # R's mean order A (20), B (5), C (1) takes the median order's groups 1, 2, 3: A 1, B 2, C 3.
    table = r_np_group_names(SMALLEST)
    assert table["treatment"].tolist() == ["B", "C", "A"]
    assert groups_of(table, "group") == {"B": 1, "C": 2, "A": 3}
    assert groups_of(table, "group_r") == {"A": 1, "B": 2, "C": 3}


def test_shared_group_is_printed_on_other_treatments():
    # B and C identical (5 x5), A = 0 x4, 100. Median order B, C (tie: equal means, then name), A.
    # delta(B, A) = 0.6: cut. Ranks: 0 -> 2.5, 5 x10 -> 9.5, 100 -> 15; rank sums B 47.5, C 47.5,
    # A 25. Cut after B: 47.5^2/5 + 72.5^2/10 = 976.875; after C: 95^2/10 + 25^2/5 = 1027.5: so
    # {B, C} | {A}; delta(B, C) = 0: one group. Partition B 1, C 1, A 2.
    # R's mean order A (20), B (5), C (5, column order) takes 1, 1, 2: A 1, B 1, C 2.
    values = pd.DataFrame({"A": [0.0, 0, 0, 0, 100], "B": [5.0] * 5, "C": [5.0] * 5})
    table = r_np_group_names(values)
    assert groups_of(table, "group") == {"B": 1, "C": 1, "A": 2}
    assert groups_of(table, "group_r") == {"A": 1, "B": 1, "C": 2}


def test_same_orders_same_groups():
    values = pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [1.5, 1.8, 3.5, 3.9], "c": [11.0, 12, 13, 14]})
    table = r_np_group_names(values)
    assert table["group_r"].tolist() == table["group"].tolist()


def test_given_partition_lower_is_better_and_column_order():
    groups = scott_knott_esd(SMALLEST)
    assert r_np_group_names(SMALLEST, groups).equals(r_np_group_names(SMALLEST))
    flipped = r_np_group_names(-SMALLEST, higher_is_better=False)
    assert groups_of(flipped, "group") == {"B": 1, "C": 2, "A": 3}
    assert groups_of(flipped, "group_r") == {"A": 1, "B": 2, "C": 3}
    permuted = r_np_group_names(SMALLEST[["C", "A", "B"]])
    assert groups_of(permuted, "group_r") == {"A": 1, "B": 2, "C": 3}


def test_groups_must_be_of_the_values():
    with pytest.raises(DelaycvError, match="not the columns"):
        r_np_group_names(SMALLEST[["A", "B"]], scott_knott_esd(SMALLEST))


def test_validity_r_naming_keeps_the_partition_of_validity_ranks():
    rows = []
    for metric, shift in (("gmean", 0.0), ("fpr_1", 1.0)):
        for policy in SMALLEST.columns:
            for i, v in enumerate(SMALLEST[policy]):
                rows.append(
                    {
                        "project": f"p{i}",
                        "policy": policy,
                        "at": "commit_1000",
                        "metric": metric,
                        "validity": v + shift,
                    }
                )
    validity = pd.DataFrame(rows)
    named = rep.validity_r_naming(validity)
    ranks = rep.validity_ranks(validity)
    assert named["group"].tolist() == ranks["group"].tolist()
    assert named["treatment"].tolist() == ranks["treatment"].tolist()
    gmean = named[named["metric"] == "gmean"]
    assert groups_of(gmean, "group_r") == {"A": 1, "B": 2, "C": 3}
    assert groups_of(gmean, "mean") == {"A": 20.0, "B": 5.0, "C": 1.0}
