"""Run one rule script outside Snakemake, in an isolated interpreter (tests/workflow/test_conda_envs.py).

    python -I tests/workflow/isolated_script.py JOB.json REPORT.json

JOB.json holds what Snakemake gave the job (input, output, params, wildcards, log, threads: recorded
from a real run) and the script's path. This file builds the same ``snakemake`` object from plain
lists and strings, creates the folders of the outputs and logs as Snakemake does, and runs the
script. REPORT.json lists every imported module's file that lies outside this interpreter's own
environment (its prefix and the standard library) and outside the delaycv package: with ``-I`` and
a venv without system site-packages, that list must be empty.
"""

import json
import os
import runpy
import sys
import sysconfig
from pathlib import Path


class Files(list):
    """Snakemake's named lists: positional items, and the named ones as attributes."""

    def __init__(self, record: dict) -> None:
        super().__init__(record["items"])
        for name, value in record["named"].items():
            setattr(self, name, value)


class Job:
    def __init__(self, record: dict) -> None:
        for name in ("input", "output", "params", "wildcards", "log"):
            setattr(self, name, Files(record[name]))
        self.threads = record["threads"]
        self.rule = record["rule"]


def outside_files(script: str) -> list[str]:
    """Imported modules' files other than the env's, the standard library's and delaycv's."""
    import delaycv

    own = [Path(sys.prefix).resolve(), Path(delaycv.__path__[0]).resolve()]
    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    # (the site-packages of the interpreter the venv was made from lie inside its stdlib folder)
    base_site = Path(sysconfig.get_paths(vars={"base": sys.base_prefix})["purelib"]).resolve()
    found = []
    for name, module in sorted(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not file:
            continue
        path = Path(file).resolve()
        if path in (Path(script).resolve(), Path(__file__).resolve()):  # (as __main__ and such)
            continue
        if any(path.is_relative_to(root) for root in own):
            continue
        if path.is_relative_to(stdlib) and not path.is_relative_to(base_site):
            continue
        found.append(f"{name}: {path}")
    return found


def main(job_file: str, report_file: str) -> None:
    record = json.loads(Path(job_file).read_text())
    job = Job(record)
    for path in [*job.output, *job.log]:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    os.environ["DELAYCV_KEEP_TEARDOWN"] = "1"  # the script's end_job returns: the report follows
    runpy.run_path(record["script"], init_globals={"snakemake": job}, run_name="__main__")
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__  # (the script redirects them)
    report = {
        "prefix": sys.prefix,
        "isolated": bool(sys.flags.isolated),
        "path": sys.path,
        "outside": outside_files(record["script"]),
    }
    Path(report_file).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main(*sys.argv[1:])
