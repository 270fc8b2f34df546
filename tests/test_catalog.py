"""The files of the Snakemake catalog's conventions say what the workflow does.

``config/README.md`` documents every key of the config schema (each top-level key in a section
``### `key```, each key under it in a row of that section's table, with the schema's default) and
no key the schema lacks, and names every shipped config; ``profiles/README.md`` documents every
key of each profile, and the SLURM profile's keys are the ones a SLURM run uses; ``LICENSE`` and
``pyproject.toml`` name the same license.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SCHEMA = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
CONFIG_README = (REPO / "config" / "README.md").read_text(encoding="utf-8")
PROFILES_README = (REPO / "profiles" / "README.md").read_text(encoding="utf-8")


def sections(text: str) -> dict[str, str]:
    """Heading (without its #s) -> the text up to the next heading of any level."""
    parts = re.split(r"^#{1,6} (.*)$", text, flags=re.M)
    return {title.strip(): body for title, body in zip(parts[1::2], parts[2::2], strict=True)}


def key_sections(text: str) -> dict[str, str]:
    """The sections headed by one key in backticks (``### `validation```): key -> text."""
    out = {}
    for title, body in sections(text).items():
        found = re.fullmatch(r"`([^`]+)`", title)
        if found:
            out[found[1]] = body
    return out


def table_rows(text: str) -> dict[str, list[str]]:
    """Rows of the tables in ``text`` whose first cell is one key in backticks: key -> cells."""
    rows = {}
    for line in text.splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        found = re.fullmatch(r"`([^`]+)`", cells[0])
        if found:
            rows[found[1]] = cells
    return rows


def resolve(node: dict) -> dict:
    ref = node.get("$ref")
    if ref is None:
        return node
    assert ref.startswith("#/$defs/"), ref
    return SCHEMA["$defs"][ref.removeprefix("#/$defs/")]


def documented_keys(name: str) -> dict[str, dict]:
    """The keys the section of top-level key ``name`` documents, with their schema: its own
    properties, those of each entry of a mapping of names (``learners: {NAME: spec}``), or the
    key itself when it has neither (``seeds``, ``results``)."""
    node = SCHEMA["properties"][name]
    if "properties" in node:
        return node["properties"]
    entry = node.get("additionalProperties")
    if isinstance(entry, dict) and "properties" in resolve(entry):
        return resolve(entry)["properties"]
    return {name: node}


def yaml_text(value) -> str:
    """A default as YAML writes it in flow style (``[observed, 'true']``, ``false``, ``0.0``)."""
    text = yaml.safe_dump(value, default_flow_style=True, width=10**6).strip()
    return text.removesuffix("...").strip()


TOP_LEVEL = list(SCHEMA["properties"])


@pytest.mark.parametrize("name", TOP_LEVEL)
def test_config_readme_documents_every_key_of_the_schema_with_its_default(name):
    section = key_sections(CONFIG_README).get(name)
    assert section is not None, f"config/README.md has no section ### `{name}`"
    rows = table_rows(section)
    for key, schema in documented_keys(name).items():
        assert key in rows, f"config/README.md, section {name}: no row for key {key}"
        if "default" in schema and not isinstance(schema["default"], dict):
            assert rows[key][1] == f"`{yaml_text(schema['default'])}`", (
                f"config/README.md, {name}.{key}: the default column says {rows[key][1]}, the "
                f"schema's default is {yaml_text(schema['default'])}"
            )


def test_config_readme_documents_no_key_the_schema_lacks():
    documented = key_sections(CONFIG_README)
    assert set(documented) == set(TOP_LEVEL)
    for name, section in documented.items():
        extra = set(table_rows(section)) - set(documented_keys(name))
        assert not extra, f"config/README.md, section {name}: rows for keys not in the schema"


def test_config_readme_lists_every_top_level_key_and_the_required_ones():
    rows = table_rows(sections(CONFIG_README)["Keys"])
    assert list(rows) == TOP_LEVEL
    assert {key for key, cells in rows.items() if cells[1] == "yes"} == set(SCHEMA["required"])


def test_config_readme_describes_every_shipped_config():
    table = table_rows(sections(CONFIG_README)["The config files"])
    shipped = ["config.yaml"] + sorted(
        p.relative_to(REPO).as_posix() for p in (REPO / "config").glob("*.yaml")
    )
    assert sorted(table) == sorted(shipped)
    for name, cells in table.items():
        assert cells[1] and cells[2].startswith("`snakemake "), name


@pytest.mark.parametrize("profile", ["default", "slurm"])
def test_profiles_readme_documents_every_key_of_each_profile(profile):
    config = yaml.safe_load((REPO / "profiles" / profile / "config.yaml").read_text())
    titles = [t for t in sections(PROFILES_README) if t.startswith(f"`profiles/{profile}`")]
    assert len(titles) == 1, f"profiles/README.md has no section for profiles/{profile}"
    rows = table_rows(sections(PROFILES_README)[titles[0]])
    assert sorted(rows) == sorted(config), profile


def test_profiles_readme_covers_every_profile():
    folders = sorted(p.name for p in (REPO / "profiles").iterdir() if p.is_dir())
    titles = sorted(
        re.match(r"`profiles/([^`]+)`", t)[1]
        for t in sections(PROFILES_README)
        if t.startswith("`profiles/")
    )
    assert titles == folders


def test_the_slurm_profile_keys_hold_under_the_workflow_profile(monkeypatch):
    """Snakemake applies ``profiles/default`` (the workflow-specific profile) under ``--profile
    profiles/slurm`` as well, and its keys win: a key both set must have one value, or the SLURM
    run would get the local one (``keep-going: false``, ``latency-wait: 5`` did)."""
    from snakemake.cli import parse_args

    monkeypatch.chdir(REPO)
    slurm = yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())
    _, args = parse_args(["--profile", "profiles/slurm", "--dry-run"])
    scalars = {k: v for k, v in slurm.items() if isinstance(v, bool | int | str)}
    assert {"keep-going", "latency-wait", "retries", "executor"} <= set(scalars)
    for key, value in scalars.items():
        assert getattr(args, key.replace("-", "_")) == value, key
    local = yaml.safe_load((REPO / "profiles" / "default" / "config.yaml").read_text())
    for key in set(local) & set(slurm):
        assert local[key] == slurm[key], key


def test_license_and_pyproject_agree():
    license_text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert license_text.splitlines()[0] == "MIT License"
    assert "Copyright (c) 2026 the delaycv authors" in license_text
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["license"] == {"text": "MIT"}
