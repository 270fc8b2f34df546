"""Stage 4, statistics on merged tables (pure: opens no files): paired permutation tests of
learners and of the bias of realistic evaluation (:mod:`~delaycv.stats.compare`), policy contrasts
(:mod:`~delaycv.stats.contrasts`), rankings across datasets (Friedman/Nemenyi, Scott-Knott ESD:
:mod:`~delaycv.stats.ranking`) and the HITL study's replication (:mod:`~delaycv.stats.replication`).

Imports: :mod:`delaycv.common`, :mod:`delaycv.protocol` (durations, policies),
:mod:`delaycv.metrics` (names), numpy, pandas, scipy.
"""
