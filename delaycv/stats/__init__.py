"""Stage 4, statistics on merged tables (pure: opens no files), one idea per module:

* :mod:`~delaycv.stats.permutation`: the paired sign-flip permutation test;
* :mod:`~delaycv.stats.companions`: its companions (Holm, t-interval, Cliff's delta, Wilcoxon,
  sign test);
* :mod:`~delaycv.stats.checkpoints`: the checkpoint request (checked, resolved, labelled) and the
  notes of rows with no test;
* :mod:`~delaycv.stats.paired`: the paired table, values paired by (seed, fold), repeated seeds
  left out;
* :mod:`~delaycv.stats.frames`: the conventions shared by the result tables (required columns,
  rows sorted by policy, progress lines);
* :mod:`~delaycv.stats.learner_tests`: the pairwise learner tests;
* :mod:`~delaycv.stats.bias`: the bias of realistic evaluation (observed - true);
* :mod:`~delaycv.stats.contrasts`: the policy contrasts;
* :mod:`~delaycv.stats.mcnemar`: McNemar's test on prediction logs;
* :mod:`~delaycv.stats.friedman`: Friedman, Nemenyi, critical difference, Cohen's d;
* :mod:`~delaycv.stats.scott_knott`: Scott-Knott ESD;
* :mod:`~delaycv.stats.families`: the ranking families across and within datasets;
* :mod:`~delaycv.stats.replication`: the HITL study's replication;
* :mod:`~delaycv.stats.settings`: the settings of the compare and rankings stages, checked once
  (light: the command line checks its options with it before numpy is imported).

Imports: :mod:`delaycv.common`, :mod:`delaycv.protocol` (durations, policies, policy windows),
:mod:`delaycv.metrics` (names, properties), numpy, pandas, scipy.
"""
