"""Names of the effort-aware measures (docs/metrics.md): computed for a stream
that carries an effort (``Stream.effort``), absent from the tables of one that does not."""

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
