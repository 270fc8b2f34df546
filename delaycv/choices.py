"""Names a user chooses among that the library and the command line share: the labels a metric
is scored against, the alternatives of the paired tests, the file formats of the figures.

They live apart from the modules that use them (:mod:`delaycv.compare`, :mod:`delaycv.plots`, which
import numpy, pandas, scipy and matplotlib), so that the command line offers them as choices, and
checks them, without importing any of those.
"""

#: The labels a metric is scored against: those the policy revealed, and the true ones.
REFERENCES = ("observed", "true")
#: The alternatives of the paired tests.
ALTERNATIVES = ("two-sided", "greater", "less")
#: The file formats of the figures.
FIGURE_FORMATS = ("png", "pdf")
