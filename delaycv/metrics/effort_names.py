"""Names of the effort-aware measures (docs/metrics.md), and of the column that names their
scope: computed for a stream that carries an effort (``Stream.effort``), absent from the tables
of one that does not."""

#: the effort-aware measures, in the order of the fold table's columns (after ``METRICS``)
EFFORT_METRICS: tuple[str, ...] = (
    "effort_recall_20",
    "effort_precision_20",
    "effort_f1_20",
    "effort_pci_20",
    "effort_at_recall_20",
    "ifa",
    "popt",
)
#: the fold table's column before them that names their scope (``cumulative``, ``sliding(W)``:
#: :attr:`delaycv.metrics.effort_scope.EffortScope.label`)
EFFORT_SCOPE_COLUMN = "effort_scope"
#: the columns a stream with an effort adds to the fold table, in order
EFFORT_COLUMNS: tuple[str, ...] = (EFFORT_SCOPE_COLUMN, *EFFORT_METRICS)
