"""Conda environments (envs/*.yaml): what can be checked without reaching a conda channel.

Every rule that runs code names an env file; every env file parses, uses conda-forge, pins every
package exactly (python as major.minor), and its pins agree with requirements.lock (the pip pins
the tests run with); each env holds every third-party package that the delaycv modules of its rules
import, and has the post-deploy script that installs delaycv into it.

The slow test runs every rule script of a real run of the tiny config again, each in a venv built
from exactly its env's pins (their pip releases; with no system site-packages), delaycv installed by
the env's own post-deploy script, under ``python -I`` (no PYTHONPATH, no user site, no script
folder): the scripts then find nothing outside their env, and their results equal the run's.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from delaycv.study import digests
from tests.support.paths import REPO
from tests.support.workflow_copy import copy_workflow, run

ENVS = sorted((REPO / "envs").glob("*.yaml"))

#: conda-forge package name -> the pip distribution of requirements.lock with the same release
CONDA_TO_PIP = {
    "pyyaml": "pyyaml",  # (PyYAML on PyPI; the lock's names are compared in lower case)
    "matplotlib-base": "matplotlib",
    "seaborn-base": "seaborn",
    "scikit-learn": "scikit-learn",
    "interface_meta": "interface-meta",
}
#: conda-forge packages that are no Python distributions (not in requirements.lock), with their pin:
#: Java for MOA learners, as the feature release whose newest build conda picks (CI's Debian Java
#: is the same release)
NOT_PIP = {"openjdk": "17"}
#: import name -> conda-forge package
IMPORT_TO_CONDA = {
    "jpype": "jpype1",
    "yaml": "pyyaml",
    "sklearn": "scikit-learn",
    "matplotlib": "matplotlib-base",
    "seaborn": "seaborn-base",
    "scikit_posthocs": "scikit-posthocs",
}
#: rule -> (env file, the workflow stage whose delaycv modules its script runs)
RULES = {
    "convert": ("data", "convert"),
    "evaluate": ("engine", "evaluate"),
    "merge": ("engine", "merge"),
    "merge_all": ("engine", "merge"),
    "compare": ("stats", "compare"),
    "rankings": ("stats", "rankings"),
    "figures": ("plots", "figures"),
}
PYTHON = "3.11"
EXACT = re.compile(r"^(?P<name>[A-Za-z0-9_.-]+)=(?P<version>\d+(\.\d+)*)$")


def lock_pins() -> dict[str, str]:
    pins = {}
    for line in (REPO / "requirements.lock").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            pins[name.lower().replace("_", "-")] = version
    return pins


def env_pins(path: Path) -> dict[str, str]:
    env = yaml.safe_load(path.read_text())
    pins = {}
    for dep in env["dependencies"]:
        assert isinstance(dep, str), f"{path.name}: {dep!r} (a pip section is not used)"
        m = EXACT.match(dep)
        assert m, f"{path.name}: {dep!r} is not pinned exactly (expected name=version)"
        pins[m["name"]] = m["version"]
    return pins


def rule_blocks() -> dict[str, str]:
    """Rule name -> the text of its block, from Snakefile and workflow/rules/*.smk."""
    blocks = {}
    files = [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]
    for path in files:
        text = path.read_text()
        parts = re.split(r"^(?:local)?rule (\w+):\s*$", text, flags=re.M)
        for name, body in zip(parts[1::2], parts[2::2], strict=True):
            blocks[name] = body.split("\n\n\n")[0]
    return blocks


def test_there_is_one_env_per_rule_family():
    assert {p.stem for p in ENVS} == {"data", "engine", "stats", "plots"}


def test_every_rule_that_runs_code_has_its_conda_env():
    blocks = rule_blocks()
    assert set(blocks) == set(RULES) | {"all"}
    for rule, (env, _) in RULES.items():
        m = re.search(r"conda:\s*\n\s*\"([^\"]+)\"", blocks[rule])
        assert m, f"rule {rule} has no conda: directive"
        rules_dir = REPO / "workflow" / "rules"
        assert (rules_dir / m.group(1)).resolve() == REPO / "envs" / f"{env}.yaml", rule
    assert "conda:" not in blocks["all"] and "script:" not in blocks["all"]


@pytest.mark.parametrize("path", ENVS, ids=lambda p: p.name)
def test_env_parses_and_pins_every_package_exactly(path):
    env = yaml.safe_load(path.read_text())
    assert set(env) == {"channels", "dependencies"}
    assert env["channels"][0] == "conda-forge"
    assert "defaults" not in env["channels"]
    pins = env_pins(path)
    # the minor release, whose newest build conda picks (not a patch release of some year)
    assert pins["python"] == PYTHON


@pytest.mark.parametrize("path", ENVS, ids=lambda p: p.name)
def test_env_pins_agree_with_the_pip_lock(path):
    lock = lock_pins()
    for name, version in env_pins(path).items():
        if name == "python":  # the tests' interpreter (the lock's) is that minor release
            assert version == f"{sys.version_info.major}.{sys.version_info.minor}"
            continue
        if name in NOT_PIP:
            assert version == NOT_PIP[name], (
                f"{path.name}: {name}={version}, expected {NOT_PIP[name]}"
            )
            continue
        pip_name = CONDA_TO_PIP.get(name, name)
        assert pip_name in lock, f"{path.name}: {name} is not in requirements.lock"
        assert lock[pip_name] == version, f"{path.name}: {name}={version}, lock {lock[pip_name]}"


def third_party_imports(stage: str) -> set[str]:
    root = digests.package_root(REPO)
    closure = digests.module_closure(digests.STAGE_MODULES[stage], root)
    names: set[str] = set()
    for path in closure.values():
        if path is None:
            continue
        if path.suffix == ".pyx":  # Cython (the compiled fold loop): its imports are lines
            for line in path.read_text().splitlines():
                found = re.match(r"(?:from\s+([\w.]+)\s+import\s|import\s+([\w.]+))", line)
                if found and " cimport " not in line:
                    names.add((found[1] or found[2]).split(".")[0])
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return {n for n in names if n != "delaycv" and n not in sys.stdlib_module_names}


@pytest.mark.parametrize("rule", sorted(RULES))
def test_env_holds_what_the_rule_s_library_code_imports(rule):
    env, stage = RULES[rule]
    pins = env_pins(REPO / "envs" / f"{env}.yaml")
    needed = {IMPORT_TO_CONDA.get(n, n) for n in third_party_imports(stage)}
    # the script's own imports
    script = (REPO / "scripts" / f"{'merge' if rule == 'merge_all' else rule}.py").read_text()
    for node in ast.walk(ast.parse(script)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            for mod in mods:
                top = (mod or "").split(".")[0]
                if top and top != "delaycv" and top not in sys.stdlib_module_names:
                    needed.add(IMPORT_TO_CONDA.get(top, top))
    missing = needed - set(pins)
    assert not missing, f"envs/{env}.yaml lacks {sorted(missing)} needed by rule {rule}"


# --------------------------------------------------------------------------- delaycv in the envs


def test_every_env_has_the_post_deploy_script_that_installs_delaycv():
    scripts = {p.name: p for p in (REPO / "envs").glob("*.post-deploy.sh")}
    assert set(scripts) == {f"{p.stem}.post-deploy.sh" for p in ENVS}
    texts = {p.read_text() for p in scripts.values()}
    assert len(texts) == 1, "the post-deploy scripts differ"
    for path in scripts.values():
        assert os.access(path, os.X_OK), path.name
    proc = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_the_post_deploy_script_refuses_without_the_package(tmp_path):
    script = REPO / "envs" / "engine.post-deploy.sh"
    env = {"PATH": os.environ["PATH"], "CONDA_PREFIX": str(tmp_path)}
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env)
    assert proc.returncode != 0 and "DELAYCV_PACKAGE" in proc.stderr
    env["DELAYCV_PACKAGE"] = str(tmp_path)
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env)
    assert proc.returncode != 0 and "is not a delaycv package folder" in proc.stderr
    # a python whose site-packages is not in the env named by CONDA_PREFIX (here: the tests' own)
    env["DELAYCV_PACKAGE"] = str(REPO / "delaycv")
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env)
    assert proc.returncode != 0 and "is not in the env" in proc.stderr


#: where the venvs of the env pins are kept between runs (keyed by everything they are built from)
VENV_CACHE = Path(os.environ.get("DELAYCV_ENVTEST_CACHE", Path.home() / ".cache/delaycv-envtest"))


def env_venv(env: str) -> Path:
    """A venv with exactly the pip releases of ``envs/ENV.yaml``'s pins (built once, cached)."""
    path = REPO / "envs" / f"{env}.yaml"
    pins = env_pins(path)
    assert pins.pop("python") == f"{sys.version_info.major}.{sys.version_info.minor}"
    requirements = sorted(
        f"{CONDA_TO_PIP.get(n, n)}=={v}" for n, v in pins.items() if n not in NOT_PIP
    )
    key = hashlib.sha256(
        "\n".join(
            [*requirements, (REPO / "requirements.lock").read_text(), sys.version, str(REPO)]
        ).encode()
    ).hexdigest()[:12]
    venv = VENV_CACHE / key  # (envs with the same pins share it)
    if not (venv / ".complete").is_file():
        shutil.rmtree(venv, ignore_errors=True)
        base = (
            Path(sys.base_prefix)
            / "bin"
            / f"python{sys.version_info.major}.{sys.version_info.minor}"
        )
        subprocess.run([str(base), "-m", "venv", "--without-pip", str(venv)], check=True)
        # the env's pins; what they depend on at the lock's releases (conda resolves its own)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "--python",
                str(venv / "bin" / "python"),
                "install",
                "--quiet",
                "-c",
                str(REPO / "requirements.lock"),
                *requirements,
            ],
            check=True,
        )
        (venv / ".complete").write_text("\n".join(requirements) + "\n")
    # delaycv, installed as conda's post-deploy step does (activated env: PATH and CONDA_PREFIX)
    proc = subprocess.run(
        ["bash", str(REPO / "envs" / f"{env}.post-deploy.sh")],
        env={
            "PATH": os.pathsep.join([str(venv / "bin"), os.environ["PATH"]]),
            "CONDA_PREFIX": str(venv),
            "DELAYCV_PACKAGE": str(REPO / "delaycv"),
        },
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"-> {REPO / 'delaycv'}" in proc.stdout
    return venv


def isolated_env() -> dict[str, str]:
    """The environment of a rule script run in isolation: PATH and HOME only. (numpy then picks
    its BLAS kernel for this processor itself, whatever the run it is compared with was told:
    the metrics do not depend on it, ``delaycv.common.portable``.)"""
    return {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp")}


def recorded_jobs(workdir: Path) -> dict[str, list[dict]]:
    """Rule -> what Snakemake gave each of its jobs, from the kept scripts of a run."""
    jobs: dict[str, list[dict]] = {}
    for script in sorted((workdir / ".snakemake" / "scripts").glob("*.py")):
        preamble = script.read_text().splitlines()[1]
        calls = [
            node
            for node in ast.walk(ast.parse(preamble))
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "loads"
        ]
        job = pickle.loads(calls[0].args[0].value)

        def plain(named_list):
            names = dict(named_list.items())
            return {
                "items": [str(x) for x in named_list],
                "named": {
                    k: [str(x) for x in v] if isinstance(v, list) else str(v)
                    for k, v in names.items()
                },
            }

        record = {
            name: plain(getattr(job, name))
            for name in ("input", "output", "params", "wildcards", "log")
        }
        record.update(rule=job.rule, threads=job.threads)
        jobs.setdefault(job.rule, []).append(record)
    return jobs


@pytest.fixture(scope="module")
def recorded_run(tmp_path_factory) -> tuple[Path, dict[str, list[dict]]]:
    """A local run of the tiny config (the host's environment), its rule scripts kept."""
    workdir = copy_workflow(
        tmp_path_factory.mktemp("recorded") / "wf",
        REPO / "config" / "test-small.yaml",
        library=False,
    )
    run(workdir, "--cores", "2", "--skip-script-cleanup")
    return workdir, recorded_jobs(workdir)


ORDER = ("convert", "evaluate", "merge", "merge_all", "compare", "rankings", "figures")


@pytest.mark.slow
def test_each_rule_script_runs_in_a_venv_of_exactly_its_env(recorded_run, tmp_path):
    import pandas as pd

    recorded, jobs = recorded_run
    assert set(jobs) == set(ORDER) and set(RULES) == set(ORDER)
    venvs = {env: env_venv(env) for env in sorted({e for e, _ in RULES.values()})}
    workdir = tmp_path / "isolated"
    workdir.mkdir()
    for rule in ORDER:
        env, _ = RULES[rule]
        python = venvs[env] / "bin" / "python"
        for i, record in enumerate(jobs[rule]):
            script = "merge" if rule == "merge_all" else rule
            record = {**record, "script": str(REPO / "scripts" / f"{script}.py")}
            job_file = tmp_path / f"{rule}-{i}.json"
            report_file = tmp_path / f"{rule}-{i}.report.json"
            job_file.write_text(json.dumps(record))
            proc = subprocess.run(
                [
                    str(python),
                    "-I",
                    str(REPO / "tests" / "workflow" / "isolated_script.py"),
                    str(job_file),
                    str(report_file),
                ],
                cwd=workdir,
                env=isolated_env(),
                capture_output=True,
                text=True,
            )
            log = workdir / record["log"]["items"][0]
            assert proc.returncode == 0, (
                f"rule {rule} in env {env}: {proc.stderr[-3000:]}\n"
                f"{log.read_text()[-3000:] if log.exists() else ''}"
            )
            report = json.loads(report_file.read_text())
            assert report["isolated"] and Path(report["prefix"]) == venvs[env]
            assert report["outside"] == [], f"rule {rule} imported from outside its env"

    # the same results as the run in the host's environment (the CPU seconds are measured)
    merged = pd.read_parquet(workdir / "results" / "merged.parquet")
    expected = pd.read_parquet(recorded / "results" / "merged.parquet")
    pd.testing.assert_frame_equal(
        merged.drop(columns="cpu_seconds"), expected.drop(columns="cpu_seconds")
    )
    for name in ("tests", "strip", "bias"):
        pd.testing.assert_frame_equal(
            pd.read_parquet(workdir / "results" / "tests" / "tiny" / f"{name}.parquet"),
            pd.read_parquet(recorded / "results" / "tests" / "tiny" / f"{name}.parquet"),
        )
    figures = sorted(p.name for p in (workdir / "results" / "figures" / "tiny").glob("*.p[nd][gf]"))
    assert figures and figures == sorted(
        p.name for p in (recorded / "results" / "figures" / "tiny").glob("*.p[nd][gf]")
    )
