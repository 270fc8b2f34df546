"""The presentation stage: the pages of the workflow's report, beside the figures
(:mod:`delaycv.figures`). Snakemake's report shows an HTML result inside the report but offers a
CSV only as a download: each table a reader should read gets a self-contained page (no script,
no external resource), rounded, in one look.

- :mod:`~delaycv.report.pages`: the look and the head every page shares;
- :mod:`~delaycv.report.statistics`: the pages of the learner tests, the bias tests, the policy
  contrasts and the rankings;
- :mod:`~delaycv.report.runs`: the page of the table of runs (what each evaluation cost).

Pure: tables in, strings out; the stages (:mod:`delaycv.stages`) write them.

Imports: :mod:`delaycv.common`, :mod:`delaycv.metrics` (properties: which way is better),
:mod:`delaycv.protocol` (the learner contract's threshold of predictions without a probability),
:mod:`delaycv.stats` (a checkpoint request in words), :mod:`delaycv.tables` (the runs table's
units and columns).
"""
