"""Copies of the workflow in temporary folders, and running Snakemake on them (tests, benchmarks).

``copy_workflow(dest, config)`` copies the Snakefile, workflow/, scripts/, envs/, profiles/ and (by
default) the delaycv package, so that the copy's library code can be edited without touching the
checkout, and writes ``config`` as the copy's config.yaml. ``run(dest, ...)`` runs Snakemake there
with the checkout's virtualenv first on PATH. ``planned_jobs(dest)`` parses a dry run into the set of
jobs Snakemake would run, as ``(rule, wildcards)`` pairs. ``touch_outputs(dest)`` creates every
missing output empty and records it with ``--touch`` as if it had been produced (metadata included),
so rerun decisions can be tested on large grids without running them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
PARTS = ("Snakefile", "workflow", "scripts", "envs", "profiles")
BIN = Path(sys.executable).parent


def copy_workflow(dest: Path, config: dict | Path, *, library: bool = True) -> Path:
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in PARTS:
        src = REPO / part
        if src.is_dir():
            shutil.copytree(src, dest / part, ignore=ignore, dirs_exist_ok=True)
        else:
            shutil.copy2(src, dest / part)
    if library:
        shutil.copytree(REPO / "delaycv", dest / "delaycv", ignore=ignore, dirs_exist_ok=True)
    write_config(dest, config)
    return dest


def write_config(dest: Path, config: dict | Path) -> None:
    if isinstance(config, Path):
        config = yaml.safe_load(config.read_text())
    (Path(dest) / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def read_config(path: Path) -> dict:
    return yaml.safe_load(Path(path).read_text())


def env(extra: dict | None = None) -> dict:
    base = dict(os.environ)
    base["PATH"] = os.pathsep.join([str(BIN), base.get("PATH", "")])
    base.pop("PYTHONPATH", None)
    return {**base, **(extra or {})}


def run(
    workdir: Path,
    *args: str,
    check: bool = True,
    extra_env: dict | None = None,
    timeout: float = 600,
) -> subprocess.CompletedProcess:
    """``snakemake ARGS`` in ``workdir`` (the workflow-specific default profile applies)."""
    proc = subprocess.run(
        [str(BIN / "snakemake"), *args],
        cwd=workdir,
        env=env(extra_env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"snakemake {' '.join(args)} failed ({proc.returncode}):\n"
            f"{proc.stdout[-5000:]}\n{proc.stderr[-8000:]}"
        )
    return proc


_RULE = re.compile(r"^(?:local)?rule (\w+):\s*$")
_WILDCARDS = re.compile(r"^\s+wildcards: (.*)$")


def planned_jobs(workdir: Path, *args: str) -> set[tuple[str, tuple[tuple[str, str], ...]]]:
    """The jobs a dry run would execute, as ``(rule, ((wildcard, value), ...))``."""
    proc = run(workdir, "--dry-run", "--cores", "1", *args)
    jobs: set = set()
    rule = None
    wildcards: tuple = ()
    for line in (proc.stdout + "\n" + proc.stderr).splitlines():
        m = _RULE.match(line)
        if m:
            if rule is not None:
                jobs.add((rule, wildcards))
            rule, wildcards = m.group(1), ()
            continue
        m = _WILDCARDS.match(line)
        if m and rule is not None:
            pairs = [item.split("=", 1) for item in m.group(1).split(", ")]
            wildcards = tuple((k, v) for k, v in pairs)
    if rule is not None:
        jobs.add((rule, wildcards))
    return jobs


def rules_of(jobs) -> dict[str, int]:
    """How many jobs of each rule."""
    counts: dict[str, int] = {}
    for rule, _ in jobs:
        counts[rule] = counts.get(rule, 0) + 1
    return counts


def missing_outputs(workdir: Path) -> list[str]:
    proc = run(workdir, "--summary", "--cores", "1")
    out = []
    for line in proc.stdout.splitlines()[1:]:
        fields = line.split("\t")
        if len(fields) >= 5 and fields[4] == "missing":
            out.append(fields[0])
    return out


def touch_outputs(workdir: Path) -> int:
    """Create every missing output (empty; folders for paths without a suffix), then ``--touch``."""
    workdir = Path(workdir)
    missing = missing_outputs(workdir)
    for name in missing:
        path = workdir / name
        if path.suffix:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
        else:
            path.mkdir(parents=True, exist_ok=True)
    run(workdir, "--touch", "--forceall", "--cores", "1", "--quiet")
    return len(missing)


def write_commit_guru_csv(path: Path, rows: int = 300, seed: int = 3) -> Path:
    """A raw CSV in the Commit Guru layout (``delaycv convert --preset commit-guru`` reads it): the
    synthetic stream's times, labels and features; no fix links."""
    from delaycv.data.synthetic import generate_stream

    stream = generate_stream(rows=rows, seed=seed)
    frame = stream.features.copy()
    frame.insert(0, "author_date_unix_timestamp", stream.time)
    frame.insert(1, "fix_unix_timestamp", -1)
    frame["contains_bug"] = stream.label
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    return path


def convert_commit_guru(workdir: Path, raw: str | Path, stream: str) -> None:
    """``delaycv convert RAW STREAM --preset commit-guru`` in ``workdir`` (the checkout's command)."""
    subprocess.run(
        [str(BIN / "delaycv"), "convert", str(raw), stream, "--preset", "commit-guru", "--quiet"],
        cwd=workdir,
        env=env(),
        check=True,
    )
