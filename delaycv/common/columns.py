"""The columns that name a run in every table of runs (the engine's per-fold and summary tables,
the merged tables, the table of runs' costs): one home, so that the engine that writes them and
the merge that checks them agree."""

#: The columns that name a run; no two tables merged may hold rows of the same run.
RUN_KEYS = ("dataset", "learner", "seed", "policy")
