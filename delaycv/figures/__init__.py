"""Stage 5, figures (seaborn on matplotlib's Agg canvas; PNG and PDF): the comparison's figures
(:mod:`~delaycv.figures.plots`), the policy contrasts (:mod:`~delaycv.figures.contrasts`) and the
rankings (:mod:`~delaycv.figures.rankings`).

Imports: :mod:`delaycv.common`, :mod:`delaycv.stats` (the tables a figure draws),
:mod:`delaycv.protocol` (durations).
"""
