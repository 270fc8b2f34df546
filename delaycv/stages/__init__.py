"""The workflow's stages, one library function each, under the rule scripts and the CLI.

Each module of this package is one stage and holds its one function, which takes plain inputs
(paths, settings, a progress callback) and writes its outputs atomically
(:mod:`delaycv.common.atomic`):

- :mod:`~delaycv.stages.convert`: a dataset's raw file (or the embedded generator) -> the
  canonical stream;
- :mod:`~delaycv.stages.evaluate`: one run (a stream, its settings) -> a run directory;
- :mod:`~delaycv.stages.merge`: run directories -> one merged table (and the table of runs);
- :mod:`~delaycv.stages.compare`: a merged table -> the learner tests, the bias tests, the
  policy contrasts and their pages;
- :mod:`~delaycv.stages.rankings`: the merged tables of every dataset -> the rankings, their
  pages and figures;
- :mod:`~delaycv.stages.figures`: a merged table and its tests -> a folder of figures.

The rule scripts (``scripts/<stage>.py``) and the ``delaycv`` commands are adapters over these
functions. The module is also the unit of the workflow's code digests: a stage's digest is the
closure of ``delaycv.stages.<stage>`` (:data:`delaycv.study.digests.STAGE_MODULES`, derived from
this package's modules), so a stage module imports only what its stage runs.

Imports: :mod:`delaycv.common`, :mod:`delaycv.data`, :mod:`delaycv.metrics`,
:mod:`delaycv.protocol`, :mod:`delaycv.engine`, :mod:`delaycv.jvm`, :mod:`delaycv.tables`,
:mod:`delaycv.stats`, :mod:`delaycv.figures`, :mod:`delaycv.report` (the pages).
"""
