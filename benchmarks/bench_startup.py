"""Start-up: how long ``delaycv --help``, an argument error and the imports of an evaluate job take.

Each case is a fresh interpreter timed as a whole (wall clock, and its CPU time), ``--runs`` times
in alternation (run 1 of every case, then run 2, ...: a busy machine slows them alike), after an
uncounted round that warms the file cache. The median is printed beside baselines measured in the
same run: ``python -c pass`` (the interpreter alone), the third-party modules the evaluate job needs whatever delaycv does (numpy, pandas,
pyarrow.parquet), and river's own imports (``import river.tree``, ``import river.naive_bayes``:
the learner's module, which delaycv cannot make lighter). Targets: 0.3 s for ``--help`` and
argument errors, 0.8 s for the evaluate job's imports without the learner's river module (river's
share is reported apart, measured). Then one ``python -X importtime`` of the job's imports with a
tree learner, split into delaycv's own modules and the third-party packages, each with the module
that first imported it.

The package measured is the one on PYTHONPATH (else the installed one); the scripts/evaluate.py and
delaycv/cli/evaluate.py of its checkout say what the job imports. The package is copied into a
temporary folder and byte-compiled there, so that every case reads bytecode as the jobs of a
checkout do once it has run (and the checkout itself is left as it is, even under
PYTHONDONTWRITEBYTECODE):

    python benchmarks/bench_startup.py [--runs 7]
    PYTHONPATH=/path/to/other/checkout python benchmarks/bench_startup.py
"""

from __future__ import annotations

import argparse
import ast
import collections
import compileall
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HELP_TARGET = 0.3
JOB_TARGET = 0.8


def checkout(cwd: Path) -> Path:
    """The checkout whose delaycv the cases import (PYTHONPATH first; ``cwd`` holds no package)."""
    done = subprocess.run(
        [sys.executable, "-c", "import delaycv; print(delaycv.__file__)"],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(done.stdout.strip()).resolve().parents[1]


def compiled_copy(root: Path, dest: Path) -> Path:
    """A copy of the checkout's delaycv package under ``dest``, byte-compiled; its parent folder
    goes first on the cases' PYTHONPATH."""
    shutil.copytree(
        root / "delaycv", dest / "delaycv", ignore=shutil.ignore_patterns("__pycache__")
    )
    if not compileall.compile_dir(dest / "delaycv", quiet=1):
        raise SystemExit(f"{root / 'delaycv'}: a module does not compile")
    return dest


def script_imports(path: Path) -> str:
    """The top-level import statements of a rule script, in order (what its job imports)."""
    tree = ast.parse(path.read_text())
    nodes = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    return "\n".join(ast.unparse(n) for n in nodes)


def command_run_imports(path: Path) -> str:
    """The import statements at the top level of the ``run``/``_run`` functions of a command
    (what ``delaycv evaluate`` imports once its arguments are parsed)."""
    tree = ast.parse(path.read_text())
    lines = [f"import delaycv.cli.{path.stem}"]
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in ("run", "_run"):
            lines += [
                ast.unparse(n) for n in node.body if isinstance(n, ast.Import | ast.ImportFrom)
            ]
    return "\n".join(lines)


def cases(root: Path, work: Path) -> list[tuple[str, list[str], int, str]]:
    """(label, interpreter arguments, expected exit status, group) of each measured case."""
    job = script_imports(root / "scripts" / "evaluate.py")
    run = command_run_imports(root / "delaycv" / "cli" / "evaluate.py")
    stream, out = str(work / "s.parquet"), str(work / "out")
    return [
        ("python -c pass", ["-c", "pass"], 0, "baseline"),
        ("delaycv --help", ["-m", "delaycv", "--help"], 0, "help"),
        ("delaycv evaluate --help", ["-m", "delaycv", "evaluate", "--help"], 0, "help"),
        ("delaycv convert --help", ["-m", "delaycv", "convert", "--help"], 0, "help"),
        ("delaycv evaluate (no arguments)", ["-m", "delaycv", "evaluate"], 2, "help"),
        (
            "delaycv plot M --out O --dpi 0",
            ["-m", "delaycv", "plot", stream, "--out", out, "--dpi", "0"],
            2,
            "help",
        ),
        (
            "numpy, pandas, pyarrow.parquet",
            ["-c", "import numpy, pandas, pyarrow.parquet"],
            0,
            "baseline",
        ),
        ("evaluate job: scripts/evaluate.py's imports", ["-c", job], 0, "job"),
        ("delaycv evaluate: its run's imports", ["-c", run], 0, "job"),
        ("import river.tree (river's own)", ["-c", "import river.tree"], 0, "river"),
        ("import river.naive_bayes (river's own)", ["-c", "import river.naive_bayes"], 0, "river"),
        ("evaluate job + river.tree", ["-c", f"{job}\nimport river.tree"], 0, "river"),
        (
            "evaluate job + river.naive_bayes",
            ["-c", f"{job}\nimport river.naive_bayes"],
            0,
            "river",
        ),
    ]


def environment(path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(path)}


def timed(args: list[str], status: int, cwd: Path, env: dict) -> tuple[float, float]:
    """Wall and CPU seconds of one interpreter running ``args``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != status:
        raise SystemExit(f"{args}: exit {done.returncode} (expected {status}): {done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def import_times(code: str, cwd: Path, env: dict) -> list[tuple[int, int, str]]:
    """``python -X importtime``: (nesting level, self microseconds, module) in printed order."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, _, name = line[len("import time:") :].split("|")
        level = (len(name) - len(name.lstrip(" ")) - 1) // 2
        rows.append((level, int(own), name.strip()))
    return rows


def importers(rows: list[tuple[int, int, str]]) -> dict[str, str]:
    """Module -> the module whose import imported it (importtime prints children first)."""
    parent: dict[str, str] = {}
    pending: dict[int, list[str]] = collections.defaultdict(list)
    for level, _, name in rows:
        for child in pending.pop(level + 1, []):
            parent[child] = name
        pending[level].append(name)
    return parent


def package_of(module: str) -> str:
    return module.split(".")[0]


def chain(module: str, parent: dict[str, str]) -> str:
    """``module < b < a``: who imported ``module``, up to the statement's module; the steps
    within one subpackage (``river.stream.iter_sql < river.stream``) shown by the outermost."""
    shown = [module]
    step = module
    while step in parent:
        step = parent[step]
        if step.split(".")[:2] == shown[-1].split(".")[:2] and len(shown) > 1:
            shown[-1] = step
        else:
            shown.append(step)
    return " < ".join(shown)


def entry(package: str, rows: list[tuple[int, int, str]], parent: dict[str, str]) -> str:
    """The first module of ``package`` imported from outside it."""
    for _, _, name in rows:
        if package_of(name) == package and package_of(parent.get(name, "")) != package:
            return name
    return package


def breakdown(code: str, cwd: Path, env: dict, top: int) -> None:
    rows = import_times(code, cwd, env)
    parent = importers(rows)
    own = sorted(
        ((us, name) for _, us, name in rows if package_of(name) == "delaycv"), reverse=True
    )
    stdlib = set(sys.stdlib_module_names) | {"_frozen_importlib", "_frozen_importlib_external"}
    packages: dict[str, int] = collections.Counter()
    for _, us, name in rows:
        package = package_of(name)
        if package == "delaycv":
            continue
        key = "(standard library)" if package in stdlib or package.startswith("_") else package
        packages[key] += us
    total = sum(us for _, us, _ in rows)
    print(f"\nimporttime of the evaluate job's imports + river.tree: {total / 1e6:.3f} s in all")
    print(f"  delaycv's own modules: {sum(us for us, _ in own) / 1e6:.3f} s")
    for us, name in own[:top]:
        print(f"    {us / 1e3:7.1f} ms  {name}")
    print("  third-party packages (self times summed; first imported by):")
    for key, us in packages.most_common(top):
        via = "" if key == "(standard library)" else chain(entry(key, rows, parent), parent)
        print(f"    {us / 1e3:7.1f} ms  {key:<20} {via}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="runs of each case (7)")
    parser.add_argument("--top", type=int, default=12, help="imports listed per group (12)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        root = checkout(work)
        env = environment(compiled_copy(root, work / "package"))
        measured = cases(root, work)
        walls: dict[str, list[float]] = collections.defaultdict(list)
        cpus: dict[str, list[float]] = collections.defaultdict(list)
        for run in range(args.runs + 1):  # the first round warms the file cache: not counted
            for label, case_args, status, _ in measured:
                wall, cpu = timed(case_args, status, work, env)
                if run:
                    walls[label].append(wall)
                    cpus[label].append(cpu)
        median = {label: statistics.median(times) for label, times in walls.items()}
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(
            f"delaycv start-up: {root}, Python {sys.version.split()[0]}, median of {args.runs} "
            f"runs (load average {load} on {os.cpu_count()} CPUs)"
        )
        print(f"  {'case':<46} {'wall s':>7} {'cpu s':>7}  target")
        for label, _, _, group in measured:
            target = {"help": HELP_TARGET, "job": JOB_TARGET}.get(group)
            verdict = ""
            if target is not None:
                verdict = f"{target:.1f} s {'met' if median[label] <= target else 'MISSED'}"
            cpu = statistics.median(cpus[label])
            print(f"  {label:<46} {median[label]:7.3f} {cpu:7.3f}  {verdict}")
        job = median["evaluate job: scripts/evaluate.py's imports"]
        third = median["numpy, pandas, pyarrow.parquet"]
        tree = median["import river.tree (river's own)"]
        print(
            f"  delaycv's own share of the job's imports: {job - third:.3f} s "
            f"(job {job:.3f} - numpy/pandas/pyarrow {third:.3f}); river.tree adds "
            f"{median['evaluate job + river.tree'] - job:.3f} s (alone {tree:.3f} s)"
        )
        job_code = script_imports(root / "scripts" / "evaluate.py")
        breakdown(f"{job_code}\nimport river.tree", work, env, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
