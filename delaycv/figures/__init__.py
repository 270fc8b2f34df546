"""Stage 5, figures (seaborn on matplotlib's Agg canvas; PNG and PDF).

- :mod:`~delaycv.figures.style`: the look every figure shares (palette, sizes, legends, notes,
  axes) and the writing of reproducible files;
- :mod:`~delaycv.figures.rows`: the rows a figure draws (selection, policy order, fold summaries);
- one module per figure of a comparison: :mod:`~delaycv.figures.learning` (learning curves with
  the significance strip), :mod:`~delaycv.figures.bias`, :mod:`~delaycv.figures.final` (final
  distributions), :mod:`~delaycv.figures.pairwise` (pairwise heatmap),
  :mod:`~delaycv.figures.sensitivity` (sensitivity to the waiting window);
- :mod:`~delaycv.figures.figure_set`: a dataset's set of those figures, into a folder;
- :mod:`~delaycv.figures.contrasts`: the policy contrasts;
- :mod:`~delaycv.figures.rankings`: the rankings (critical-difference diagrams, SK-ESD box plots);
- :mod:`~delaycv.figures.settings`: the settings of the figures stage, checked once (light: no
  matplotlib).

Imports: :mod:`delaycv.common`, :mod:`delaycv.stats` (the tables a figure draws),
:mod:`delaycv.protocol` (durations), :mod:`delaycv.metrics.properties` (the metrics' axis labels
and which way is better).
"""
