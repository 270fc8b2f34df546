"""delaycv: delayed-label prequential k-fold evaluation of online binary classifiers."""

__version__ = "0.1.0"
