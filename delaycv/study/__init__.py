"""The study as the workflow runs it: its config, the settings of its later stages, the code
digests that decide reruns (:mod:`~delaycv.study.digests`) and the frame of its jobs.

The config is loaded by :mod:`~delaycv.study.loading` (the funnel: read, merge, validate), from
YAML read strictly with the line and column of every key (:mod:`~delaycv.study.yaml_file`),
checked by the JSON schema (:mod:`~delaycv.study.schema`; ``--config`` values read as a file's:
:mod:`~delaycv.study.overrides`) and by what the schema cannot say
(:mod:`~delaycv.study.checks`, with :mod:`~delaycv.study.datasets`,
:mod:`~delaycv.study.folders` and :mod:`~delaycv.study.policy_grids`), its mistakes collected by
:mod:`~delaycv.study.mistakes`; the runs of a loaded study and their specs are
:mod:`~delaycv.study.runs`'s, the settings of its compare, rankings and figures stages
:mod:`~delaycv.study.stage_settings`'s. A rule script's job has the frame of
:mod:`~delaycv.study.job`.

Imports: :mod:`delaycv.common`, :mod:`delaycv.data`, :mod:`delaycv.metrics`,
:mod:`delaycv.protocol`, :mod:`delaycv.engine`, :mod:`delaycv.jvm`, :mod:`delaycv.tables`,
:mod:`delaycv.stats`, :mod:`delaycv.figures` (every subpackage of the stages before the
presentation; the command line imports this one).
"""
