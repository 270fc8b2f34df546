"""Conda environments (envs/*.yaml): what can be checked without reaching a conda channel.

Every rule that runs code names an env file; every env file parses, uses conda-forge, pins every
package exactly, and its pins agree with requirements.lock (the pip pins the tests run with); each
env holds every third-party package that the delaycv modules of its rules import.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest
import yaml

from delaycv import config as dcfg

REPO = Path(__file__).resolve().parents[1]
ENVS = sorted((REPO / "envs").glob("*.yaml"))

#: conda-forge package name -> the pip distribution of requirements.lock with the same release
CONDA_TO_PIP = {
    "pyyaml": "pyyaml",
    "matplotlib-base": "matplotlib",
    "seaborn-base": "seaborn",
    "scikit-learn": "scikit-learn",
}
#: import name -> conda-forge package
IMPORT_TO_CONDA = {
    "yaml": "pyyaml",
    "sklearn": "scikit-learn",
    "matplotlib": "matplotlib-base",
    "seaborn": "seaborn-base",
}
#: rule -> (env file, the workflow stage whose delaycv modules its script runs)
RULES = {
    "convert": ("data", "convert"),
    "evaluate": ("engine", "evaluate"),
    "merge": ("engine", "merge"),
    "merge_all": ("engine", "merge"),
    "permutation_tests": ("stats", "compare"),
    "figures": ("plots", "plots"),
}
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
    assert "python" in pins


@pytest.mark.parametrize("path", ENVS, ids=lambda p: p.name)
def test_env_pins_agree_with_the_pip_lock(path):
    lock = lock_pins()
    for name, version in env_pins(path).items():
        if name == "python":
            major_minor = ".".join(version.split(".")[:2])
            assert major_minor == f"{sys.version_info.major}.{sys.version_info.minor}"
            continue
        pip_name = CONDA_TO_PIP.get(name, name)
        assert pip_name in lock, f"{path.name}: {name} is not in requirements.lock"
        assert lock[pip_name] == version, f"{path.name}: {name}={version}, lock {lock[pip_name]}"


def third_party_imports(stage: str) -> set[str]:
    root = dcfg.package_root(REPO)
    closure = dcfg.module_closure(dcfg.STAGE_MODULES[stage], root)
    names: set[str] = set()
    for path in closure.values():
        if path is None:
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
