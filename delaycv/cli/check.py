"""``delaycv check FILE...``: check a workflow study config as the workflow does when it loads.

The files are merged in order (as ``snakemake --configfile A B`` merges them) and read strictly:
a YAML syntax error names its line and column, a key given twice its line and key, an empty file
says so. Then every check of the workflow's load runs (schema, learners built and run on two
instances, policies, dataset files relative to the working directory, metrics). Snakemake reads a
``--configfile`` itself before the workflow loads, and its message for a file that is not YAML
names no file: this command names the file, the line and the column.
"""

from __future__ import annotations

import argparse
import os
import sys


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "check",
        help="check a workflow study config (the --configfile files) as the workflow loads it",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="config files, merged in order")
    parser.set_defaults(run=run)
    return parser


def run(args) -> int:
    from delaycv.config import load_study, runs

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
    print(
        f"{', '.join(args.files)}: valid: {count(len(runs(study)), ('evaluation', 'evaluations'))} "
        f"({', '.join(parts)})",
        file=sys.stdout,
    )
    return 0
