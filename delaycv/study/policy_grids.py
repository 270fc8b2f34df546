"""The policies of a study: the explicit ones checked, the grids expanded, the contrasts' reference.

A policy grid expands to one named policy per combination of its preset's windows, named as
:mod:`delaycv.protocol.policies` names presets::

    policy_grids: {hitl: {preset: hitl, pos_window: [1d, 3d], neg_window: [15d, 90d]}}
    # -> hitl_1d_15d, hitl_1d_90d, hitl_3d_15d, hitl_3d_90d
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

from delaycv.common import defaults
from delaycv.common.errors import ConfigError
from delaycv.study.mistakes import Mistakes, any_broken, with_source


def policy_name(spec: Mapping, *, where: str = "policy") -> str:
    """The name :func:`delaycv.protocol.policies.make_policy` gives a policy spec.

    Parameters
    ----------
    spec : Mapping
        A policy spec (a preset and its windows, or the spec's own ``name``).
    where : str
        The key its errors name.

    Returns
    -------
    str
        ``ideal``, ``delay_7d``, ``verification_90d``, ``hitl_7d_90d``, ... (or the spec's ``name``).

    Examples
    --------
    >>> policy_name({"preset": "hitl", "pos_window": "7d", "neg_window": "90d"})
    'hitl_7d_90d'
    """
    from delaycv.protocol.policies import make_policy

    return make_policy(dict(spec), where=where).name


def _check_policy(name: str, spec: Mapping, *, where: str) -> None:
    """Build the policy ``name`` of the config; a name that reads as a preset name
    (``hitl_7d_90d``) must say what the spec says (the figures' windows come from the spec)."""
    from delaycv.protocol.policies import check_policy_name, make_policy

    policy = make_policy({k: v for k, v in spec.items() if k != "name"}, where=where)
    check_policy_name(name, policy, location=f"key {where}")


def _grid_lists(preset: str, *, where: str = "policy_grids") -> list[str]:
    """The keys of a policy grid's window lists: the windows of the preset
    (:attr:`delaycv.protocol.policies.PolicyPreset.windows`), e.g. ``pos_window`` and ``neg_window``."""
    from delaycv.protocol.policies import PRESETS, lookup_preset

    keys = [w.key for w in lookup_preset(preset, location=f"key {where}.preset").windows]
    if not keys:
        raise ConfigError(
            f"the {preset} preset has no window to vary",
            location=f"key {where}.preset",
            expected="one of " + ", ".join(n for n, p in PRESETS.items() if p.windows),
        )
    return keys


def expand_policy_grid(grid: Mapping, *, where: str = "policy_grids") -> dict[str, dict]:
    """One policy spec per combination of a grid's window lists.

    Parameters
    ----------
    grid : Mapping
        A policy grid: ``preset``, a list of durations for each of the preset's windows, and an
        optional ``inspection_error`` that every policy shares.
    where : str
        The key its errors name.

    Returns
    -------
    dict
        Each policy's spec by its name, in grid order.

    Examples
    --------
    >>> list(expand_policy_grid({"preset": "delay", "window": ["1d", "7d"]}))
    ['delay_1d', 'delay_7d']
    """
    keys = _grid_lists(grid["preset"], where=where)
    common = {k: grid[k] for k in ("inspection_error",) if k in grid}
    out: dict[str, dict] = {}
    for values in itertools.product(*(grid.get(k, []) for k in keys)):
        spec = {"preset": grid["preset"], **dict(zip(keys, values, strict=True)), **common}
        out[policy_name(spec, where=where)] = spec
    return out


def all_policies(
    config: dict, source: str, broken: set[tuple], mistakes: Mistakes
) -> dict[str, dict]:
    """Every policy of the study by name: the explicit ones, then each grid's.

    Each policy and each grid is checked on its own: a mistake leaves it out (recorded in
    ``broken``) and the others are checked.

    Parameters
    ----------
    config : dict
        The config (its ``policies`` and ``policy_grids``).
    source : str
        The file the errors name.
    broken : set of tuple
        What was left out; each refused policy or grid is added.
    mistakes : Mistakes
        Where each mistake goes.

    Returns
    -------
    dict
        Each policy's spec by name.

    Raises
    ------
    ConfigError
        The study has no policy at all.
    """
    policies: dict[str, dict] = {}
    for name, spec in config["policies"].items():
        with mistakes.guard(broken, ("policies", name)):
            with_source(_check_policy, name, spec, where=f"policies.{name}", source=source)
        policies[name] = {**spec}
    for grid_name, grid in config["policy_grids"].items():
        with mistakes.guard(broken, ("policy_grids", grid_name)):
            _add_grid(policies, grid_name, grid, source, broken)
    if not policies and not any_broken(broken, "policies", "policy_grids"):
        raise ConfigError(
            "no policy",
            path=source,
            location="key policies",
            expected="at least one policy in policies or policy_grids",
        )
    return policies


def _add_grid(policies: dict, grid_name: str, grid: Mapping, source: str, broken: set) -> None:
    """Check the grid ``grid_name`` (its preset's window lists given, no other window) and add
    its policies to ``policies`` (a name defined twice is refused)."""
    from delaycv.protocol.policies import WINDOW_SIDES

    where = f"policy_grids.{grid_name}"
    lists = with_source(_grid_lists, grid["preset"], where=where, source=source)
    for option in lists:
        if option not in grid:
            raise ConfigError(
                "missing",
                path=source,
                location=f"key {where}.{option}",
                expected=f"a list of durations for the {grid['preset']} preset",
            )
    for option in (k for k in WINDOW_SIDES if k not in lists):
        if option in grid:
            raise ConfigError(
                f"the {grid['preset']} preset takes no {option}",
                path=source,
                location=f"key {where}.{option}",
                expected=" and ".join(lists),
            )
    grid_policies = with_source(expand_policy_grid, grid, where=where, source=source)
    for name, spec in grid_policies.items():
        if ("policies", name) in broken:  # its own mistake is reported
            continue
        if name in policies:
            raise ConfigError(
                f"policy {name!r} is defined twice",
                path=source,
                location=f"key {where}",
                expected="policy names that differ",
            )
        policies[name] = spec


def resolve_contrasts(config: dict, source: str, broken: set[tuple]) -> None:
    """Set and check, in place, ``contrasts.reference``: the policy the others are contrasted with.

    Left out, it is ``ideal`` when the study has a policy of that name, else none (no
    contrasts); ``null`` turns the contrasts off; a name that is not one of the study's
    policies is an error (unless some policies were left out: it may be one of those).

    Parameters
    ----------
    config : dict
        The config, its policies expanded.
    source : str
        The file the error names.
    broken : set of tuple
        What was left out.

    Raises
    ------
    ConfigError
        The reference is not a policy of the study.
    """
    contrasts = config.setdefault("contrasts", {})
    if "reference" not in contrasts:
        contrasts["reference"] = defaults.contrast_reference(config["policies"])
    reference = contrasts["reference"]
    if reference is not None and reference not in config["policies"]:
        if any_broken(broken, "policies", "policy_grids"):
            return  # it may be one of those: their own mistakes are reported
        raise ConfigError(
            f"no policy named {reference!r} to contrast the other policies with",
            path=source,
            location="key contrasts.reference",
            expected="one of the study's policies ("
            + ", ".join(config["policies"])
            + "), or null for no contrasts",
        )
