"""delaycv's tests, one folder per stage of the pipeline (CONTRIBUTING.md, "Tests"); shared
helpers in support/, shared fixtures in conftest.py."""
