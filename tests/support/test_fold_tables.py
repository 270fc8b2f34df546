"""The synthetic fold tables of tests/support/fold_tables.py have the fold table's contract."""

from __future__ import annotations

from tests.support.fold_tables import RUN_COLUMNS, fold_table


def test_synthetic_table_has_the_contract_columns_and_one_row_per_key():
    table = fold_table(seeds=(1, 2), folds=3, checkpoints=4)
    assert list(table.columns[: len(RUN_COLUMNS)]) == RUN_COLUMNS
    keys = ["dataset", "learner", "seed", "policy", "fold", "reference", "checkpoint"]
    assert not table.duplicated(keys).any()
    # 3 learners x 2 policies x 2 seeds x 3 folds x 4 checkpoints x 2 references
    assert len(table) == 3 * 2 * 2 * 3 * 4 * 2
    last = table["checkpoint"].max()
    assert last == 4 * 500 - 7
    assert table["time"].dtype == "int64"
