"""The Python API, ``delaycv.evaluate``."""
