"""Stages 2-3, tables: run directories written while an evaluation goes
(:mod:`~delaycv.tables.run_writer`), read back and merged into tidy tables
(:mod:`~delaycv.tables.results`), the cost of each run (:mod:`~delaycv.tables.usage`,
:mod:`~delaycv.tables.costs`) and the MOA-compatible export (:mod:`~delaycv.tables.moa_export`).

Imports: :mod:`delaycv.common`, :mod:`delaycv.data`, :mod:`delaycv.metrics`,
:mod:`delaycv.protocol` (the learner contract's share of predictions without a probability),
:mod:`delaycv.engine`.
"""
