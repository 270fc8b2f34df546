"""The ``delaycv`` command: its options, errors, light start and outputs."""
