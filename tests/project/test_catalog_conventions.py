"""The files of the Snakemake catalog's conventions say what the workflow does.

``config/README.md`` documents every key of the config schema (each top-level key in a section
``### `key```, each key under it in a row of that section's table, with the schema's default) and
no key the schema lacks, and names every shipped config; ``profiles/README.md`` documents every
key of each profile, and the SLURM profile's keys are the ones a SLURM run uses; ``LICENSE`` and
``pyproject.toml`` name the same license. ``.snakemake-workflow-catalog.yml`` has the catalog's
keys, and what it claims (conda environments, no container, a report) holds for the rules;
``.pre-commit-config.yaml`` runs the commands of ``make lint``; the version is written once.
"""

from __future__ import annotations

import re
import shlex
import tomllib

import pytest
import yaml

from tests.support.paths import REPO

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


# --- .snakemake-workflow-catalog.yml: the catalog's usage instructions ----------------------------

CATALOG = yaml.safe_load((REPO / ".snakemake-workflow-catalog.yml").read_text(encoding="utf-8"))
#: the top level the project keeps (the catalog accepts a Snakefile at the top, beside workflow/)
TOP_LEVEL_LAYOUT = [
    "Snakefile",
    "config.yaml",
    "config/README.md",
    "workflow/rules",
    "workflow/schemas/config.schema.yaml",
    "workflow/report",
    "scripts",
    "envs",
    "profiles/default/config.yaml",
    "tests",
    "results",
    "resources",
]


def workflow_text() -> str:
    """The Snakefile and every rule file, one text."""
    files = [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]
    return "\n".join(f.read_text(encoding="utf-8") for f in files)


def rule_blocks() -> dict[str, str]:
    """Rule name -> its text (up to the next top-level statement)."""
    parts = re.split(r"^rule (\w+):\n", workflow_text(), flags=re.M)
    return {
        name: re.split(r"^\S", body, maxsplit=1, flags=re.M)[0]
        for name, body in zip(parts[1::2], parts[2::2], strict=True)
    }


def test_catalog_file_has_the_catalogs_keys_only():
    assert set(CATALOG) == {"usage"}
    usage = CATALOG["usage"]
    assert set(usage) <= {"mandatory-flags", "software-stack-deployment"}
    assert "software-stack-deployment" in usage
    flags = usage.get("mandatory-flags", {"desc": "", "flags": []})
    assert set(flags) == {"desc", "flags"}
    assert isinstance(flags["flags"], str | list)
    stack = usage["software-stack-deployment"]
    assert set(stack) <= {
        "conda",
        "apptainer",
        "apptainer+conda",
        "singularity",
        "singularity+conda",
        "report",
    }
    assert all(isinstance(value, bool) for value in stack.values())
    assert stack["conda"] or stack.get("apptainer") or stack.get("singularity")


def test_catalog_claims_hold_for_the_workflow():
    stack = CATALOG["usage"]["software-stack-deployment"]
    blocks = rule_blocks()
    runners = {name: body for name, body in blocks.items() if re.search(r"^\s+script:", body, re.M)}
    assert runners, "no rule runs a script"
    if stack["conda"]:  # every rule that runs a script names an env file that exists
        for name, body in runners.items():
            found = re.search(r"^\s+conda:\n\s+\"([^\"]+)\"", body, re.M)
            assert found, f"rule {name} has no conda: directive"
            assert (REPO / "workflow" / "rules" / found[1]).resolve().is_file(), name
    containers = re.search(r"^\s*container:", workflow_text(), re.M) is not None
    assert stack.get("apptainer", False) == containers
    assert stack.get("apptainer+conda", False) == (containers and stack["conda"])
    has_report = re.search(r"^report: \"([^\"]+)\"", workflow_text(), re.M)
    assert stack["report"] == (has_report is not None)
    if has_report:
        assert (REPO / has_report[1]).is_file()


def test_catalog_layout_is_the_projects():
    for path in TOP_LEVEL_LAYOUT:
        assert (REPO / path).exists(), f"{path} is missing from the top level"
    flags = CATALOG["usage"]["mandatory-flags"]
    for mentioned in re.findall(r"\b(?:config|profiles)/[\w./-]+\w", flags["desc"]):
        assert (REPO / mentioned).exists(), mentioned


# --- pre-commit runs what `make lint` runs ---------------------------------------------------------


def make_lint_commands() -> list[str]:
    """The commands of the Makefile's lint target, without the virtualenv's prefixes."""
    lines = (REPO / "Makefile").read_text().split("\nlint:", 1)[1].splitlines()[1:]
    commands = []
    for line in lines:
        if not line.startswith("\t"):
            break
        command = re.sub(r'^PATH="[^"]*" ', "", line.strip())
        commands.append(command.replace("$(BIN)/", ""))
    return commands


def pre_commit_commands() -> list[str]:
    """The entries of .pre-commit-config.yaml's hooks, without the virtualenv's prefixes."""
    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text())
    commands = []
    for repo in config["repos"]:
        assert repo["repo"] == "local", "hooks run the virtualenv's tools, nothing downloaded"
        for hook in repo["hooks"]:
            assert hook["language"] == "system" and hook["pass_filenames"] is False, hook["id"]
            words = shlex.split(hook["entry"])
            if words[:2] == ["bash", "-c"]:
                words = shlex.split(re.sub(r'^PATH="[^"]*" exec ', "", words[2]))
            commands.append(" ".join(w.removeprefix(".venv/bin/") for w in words))
    return commands


def test_pre_commit_runs_the_commands_of_make_lint():
    assert make_lint_commands() == [
        "ruff check .",
        "ruff format --check .",
        "snakefmt --check Snakefile workflow/rules",
        "snakemake --lint --cores 1",
    ]
    assert pre_commit_commands() == make_lint_commands()


# --- the version, in one place ---------------------------------------------------------------------


def test_the_version_is_written_once():
    import delaycv

    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "delaycv.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", delaycv.__version__)
    copies = [
        path.relative_to(REPO).as_posix()
        for folder in ("delaycv", "scripts", "workflow", "envs", "benchmarks")
        for path in (REPO / folder).rglob("*")
        if path.suffix in {".py", ".pyx", ".smk", ".yaml", ".toml", ".sh", ".java"}
        and re.search(rf"['\"]{re.escape(delaycv.__version__)}['\"]", path.read_text("utf-8"))
    ]
    assert copies == ["delaycv/__init__.py"]
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"\n## [{delaycv.__version__}]" in changelog
