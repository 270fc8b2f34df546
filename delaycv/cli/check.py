"""``delaycv check FILE...``: check a workflow study config as the workflow does when it loads.

The files are merged in order (as ``snakemake --configfile A B`` merges them) and read strictly.
Every independent mistake is reported at once, in file order, one line each naming the file, the
line and column of the key, the key and what was expected (``delaycv: error: my.yaml:7:12: key
seeds.1: 'x' is a string (expected ...)``); exit status 2. A file that cannot be read, is not
YAML, is empty or is not a mapping is reported alone (nothing else can be checked). The checks
are the workflow's: schema, learners built and run on two instances, policies, dataset files
relative to the working directory (readable, one stream under one name), metrics, the
``results`` and ``runs`` folders, names that fit the file system and ``DELAYCV_PURE_PYTHON``.
Snakemake reads a ``--configfile`` itself before the workflow loads, and its message for a file
that is not YAML names no file: this command names the file, the line and the column. What is
accepted but deprecated (the estimator kind ``window``, now ``sliding``), or would give numbers
that say less than a study expects (folds and seeds too few for any test to be significant), is a
warning on stderr (``delaycv: warning: my.yaml:9:9: key estimator.kind: ...``), and the config is
valid; the verdict counts them (``my.yaml: valid (1 warning): 4 evaluations (...)``).
"""

from __future__ import annotations

import argparse
import os
import sys

from delaycv.cli import description, warnings_on_stderr


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "check",
        help="check a workflow study config (the --configfile files) as the workflow loads it",
        description=description(__doc__),
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="config files, merged in order")
    parser.set_defaults(run=run)
    return parser


def run(args) -> int:
    import logging

    from delaycv.study.loading import load_study
    from delaycv.study.runs import runs

    # the config's warnings (a deprecated spelling) and the Java fold loop's (a jar not used):
    # one line each on stderr, as the others'
    warned: list[logging.LogRecord] = []  # (counted for the verdict)
    with warnings_on_stderr(("delaycv.study", "delaycv.jvm"), seen=warned):
        study = load_study(args.files, cwd=os.getcwd())

    nouns = {
        "datasets": ("dataset", "datasets"),
        "learners": ("learner", "learners"),
        "seeds": ("seed", "seeds"),
        "policies": ("policy", "policies"),
    }

    def count(n: int, forms: tuple[str, str]) -> str:
        return f"{n} {forms[n != 1]}"

    parts = [count(len(study[key]), forms) for key, forms in nouns.items()]
    verdict = f"valid ({count(len(warned), ('warning', 'warnings'))})" if warned else "valid"
    print(
        f"{', '.join(args.files)}: {verdict}: "
        f"{count(len(runs(study)), ('evaluation', 'evaluations'))} ({', '.join(parts)})",
        file=sys.stdout,
    )
    return 0
