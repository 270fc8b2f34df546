"""How the columns of a raw file become the canonical stream: :class:`Mapping`, the presets of the
known formats (:data:`PRESETS`: ``commit-guru``, ``spdisc``) and the other choices of a conversion.

:func:`delaycv.data.convert.convert_file` applies a mapping; the workflow's config loader checks the
datasets' mappings and the command line offers the presets, link kinds and ``inf`` modes as
choices. This module imports neither numpy nor pandas nor pyarrow: both stay light.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

from delaycv.common.checks import is_number
from delaycv.common.errors import ConfigError, InputError
from delaycv.data.timeunits import MAPPING_TIME_UNITS, POSITION

#: What the link column holds (see :mod:`delaycv.data.convert`): the arrival time of the commit a row
#: fixes, the reveal time of the row's own positive label, or spdisc's commit type (its rows of
#: type 3 are copies of earlier defect-inducing rows, placed at the time each was found).
LINK_KINDS = ("fix_timestamp", "label_time", "commit_type")
#: the link kind of spdisc's ``commit_type`` column
COMMIT_TYPE = "commit_type"
#: What an infinite feature value is: an error (default) or a missing value.
INF_MODES = ("error", "missing")


def _as_tuple(value: Any, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str | int):
        return (str(value),)
    if isinstance(value, list | tuple):
        return tuple(str(v) for v in value)
    raise ConfigError(
        f"bad value {value!r}", location=f"key {key}", expected="a column name or a list of them"
    )


#: the text that means "no effort" where an effort's columns are given (any case)
NO_EFFORT = "none"


def effort_columns(value: Any, key: str = "mapping.effort") -> tuple[str, ...]:
    """The columns whose sum is the effort: a column name, a list of names, or ``None`` /
    ``"none"`` (no effort: ``()``). Errors name ``key``."""
    expected = "a column name, a list of column names (summed), or null or none (no effort)"
    if value is None or (isinstance(value, str) and value.strip().lower() == NO_EFFORT):
        return ()
    if isinstance(value, str | int) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list | tuple) or not value:
        raise ConfigError(f"bad value {value!r}", location=f"key {key}", expected=expected)
    names = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, str | int) or not str(item).strip():
            raise ConfigError(f"bad column {item!r}", location=f"key {key}", expected=expected)
        names.append(str(item).strip())
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(
            f"column {twice[0]!r} is named twice",
            location=f"key {key}",
            expected="each column once (the effort is their sum)",
        )
    return tuple(names)


def effort_description(columns: tuple[str, ...]) -> str | None:
    """What ``metadata["effort"]`` says of an effort summed from ``columns`` (``"la + ld"``),
    None for no effort."""
    return " + ".join(columns) if columns else None


def _delimiter(value: Any, key: str) -> str:
    """The CSV separator of a mapping value: one character (``\\t`` or ``tab`` is a tab)."""
    text = {"\\t": "\t", "tab": "\t"}.get(str(value), str(value)) if value is not None else ""
    if len(text) != 1 or text in '"\r\n':
        raise ConfigError(
            f"bad delimiter {value!r}",
            location=f"key {key}",
            expected="one character such as ',', ';', '|' or '\\t' (a tab), not a quote",
        )
    return text


#: the decimal marks a CSV's numbers may use
DECIMAL_MARKS = (".", ",")


def _decimal(value: Any, key: str) -> str:
    """The decimal mark of a mapping value: ``.`` or ``,`` (Excel's in many locales, with ``;``
    between the fields; with ``,`` between them too where the numbers are quoted)."""
    text = str(value) if value is not None else ""
    if text not in DECIMAL_MARKS:
        raise ConfigError(
            f"bad decimal mark {value!r}", location=f"key {key}", expected="'.' or ','"
        )
    return text


def class_text(value: Any) -> str:
    """Canonical text of a class value: ``1``, ``1.0`` and ``"1"`` are all ``"1"``."""
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        return text
    if math.isfinite(number) and number == int(number):
        return str(int(number))
    return text


def _mapping_value(key: str, value: Any, loc: str) -> Any:
    """The value of mapping key ``key`` (config key ``loc``) as a :class:`Mapping` field holds
    it: column lists as tuples, ``link_none`` a float, classes as their text, other keys text;
    a value of the wrong kind is a ConfigError."""
    if key in ("drop", "categorical"):
        return _as_tuple(value, loc)
    if key == "features":
        return None if value is None else _as_tuple(value, loc)
    if key == "effort":
        return effort_columns(value, loc)
    if key == "boolean_as_number":
        if not isinstance(value, bool):
            raise ConfigError(
                f"bad value {value!r}", location=f"key {loc}", expected="true or false"
            )
        return value
    if key == "link_none":
        try:
            return None if value is None else float(value)
        except (TypeError, ValueError):
            raise ConfigError(
                f"bad value {value!r}", location=f"key {loc}", expected="a number or null"
            ) from None
    if key in ("positive", "negative"):
        return None if value is None else class_text(value)
    if value is None:
        return None
    if isinstance(value, str) or is_number(value):
        return str(value)
    raise ConfigError(f"bad value {value!r}", location=f"key {loc}", expected="a text value")


def _check_required_keys(values: dict[str, Any], where: str) -> None:
    """A mapping needs a time and a label column, and the positive class; with ``time_unit:
    position`` no time column (and none may be given)."""
    positions = values.get("time_unit") == POSITION
    if positions and values.get("time") not in (None, ""):
        raise ConfigError(
            f"a time column ({values['time']!r}) given with time_unit position",
            location=f"key {where}.time",
            expected="no time column with time_unit position (each instance's time is its "
            "position), or the column's unit",
        )
    for key in ("label", "positive") if positions else ("time", "label", "positive"):
        if values.get(key) in (None, ""):
            raise ConfigError(
                f"missing mapping key {key!r}",
                location=f"key {where}.{key}",
                expected=_MISSING_EXPECTED.get(key, "a column name"),
            )


#: what a missing required mapping key should have been
_MISSING_EXPECTED = {
    "positive": "the positive class",
    "time": "the column of the instances' arrival times, or time_unit: position for a file "
    "without one, such as MOA's benchmark streams (each instance's time is then its position, "
    "and the windows are counts of instances such as 500i)",
}


def _check_time_keys(values: dict[str, Any], where: str) -> None:
    """``time_unit`` must be known, and a ``time_format`` (dates) goes with seconds or datetime."""
    unit = values.get("time_unit", "s")
    if unit not in MAPPING_TIME_UNITS:
        raise ConfigError(
            f"unknown time unit {unit!r}",
            location=f"key {where}.time_unit",
            expected="s, ms, us, ns (numbers: seconds ... nanoseconds), datetime (dates) or "
            "position (no time column: each instance's time is its position)",
        )
    if unit == POSITION and values.get("link") is not None:
        raise ConfigError(
            f"a link column ({values['link']!r}) given with time_unit position",
            location=f"key {where}.link",
            expected="no link without a time column (a reveal time needs times), or the time "
            "column and its unit",
        )
    if values.get("time_format") is not None and unit not in ("s", "datetime"):
        raise ConfigError(
            f"time_format given with time_unit {unit!r}",
            location=f"key {where}.time_unit",
            expected="time_unit datetime (or none) with a time_format: the column holds dates",
        )


@dataclass(frozen=True)
class Mapping:
    """How the columns of a raw file become the canonical stream.

    time          column of arrival times: Unix times in ``time_unit``, or dates
    time_unit     unit of the time (and link) numbers: ``s`` (default), ``ms``, ``us``, ``ns``; or
                  ``datetime``: dates (ISO 8601 text, an ARFF date attribute), converted exactly;
                  or ``position``: no time column (``time`` None), each instance's time is its
                  position 1, 2, ... (MOA's benchmark streams; windows in instances, ``500i``)
    time_format   strptime format (e.g. ``"%Y-%m-%d %H:%M:%S"``) when ``time`` holds date text
    label         column of the class
    positive      the positive class (label 1); compared as text, ``1`` == ``1.0``
    negative      the other class; None = the other declared ARFF value, or the one other value seen
    link          optional feedback-link column (never a feature)
    link_kind     ``fix_timestamp`` (Commit Guru), ``label_time`` or ``commit_type`` (spdisc; see
                  :mod:`delaycv.data.convert`)
    link_none     link value that means "no link" (besides a missing value); Commit Guru: -1
    drop          columns that are not features (e.g. ids, or columns that encode the future)
    categorical   columns read as text categories rather than numbers (CSV)
    features      explicit feature columns in order; None = every column not named above
    effort        the numeric columns whose sum is each instance's effort (the stream's column
                  ``effort``), ``()`` for none; given as a name, a list of names, or null/"none".
                  They stay features unless ``drop`` (or ``features``) leaves them out
    boolean_as_number  True: text/nominal features whose values are within {False, True} or
                  {0, 1} (any case) become numbers 0.0/1.0
    delimiter     CSV field separator (one character; ``\\t`` or ``tab`` for a tab)
    decimal       the decimal mark of a CSV's numbers: ``.`` (default) or ``,`` (then
                  ``1,5`` is 1.5 and ``1.5`` an error; thousands separators are errors too)
    """

    time: str | None
    label: str
    positive: str
    negative: str | None = None
    time_format: str | None = None
    time_unit: str = "s"
    link: str | None = None
    link_kind: str = "fix_timestamp"
    link_none: float | None = -1.0
    drop: tuple[str, ...] = ()
    categorical: tuple[str, ...] = ()
    features: tuple[str, ...] | None = None
    boolean_as_number: bool = True
    delimiter: str = ","
    decimal: str = "."
    effort: tuple[str, ...] = ()

    @classmethod
    def from_dict(
        cls, data: dict, *, where: str = "mapping", base: Mapping | None = None
    ) -> Mapping:
        """Build a mapping from a plain dict (YAML config), over ``base`` (e.g. a preset's).

        Errors name the key (``key mapping.positive``) and what was expected.
        """
        if not isinstance(data, dict):
            raise ConfigError(
                f"a mapping must be a dict, got {type(data).__name__}",
                location=f"key {where}",
                expected="keys time, label, positive, ...",
            )
        names = [f.name for f in fields(cls)]
        unknown = [k for k in data if k not in names]
        if unknown:
            raise ConfigError(
                f"unknown mapping key {unknown[0]!r}",
                location=f"key {where}.{unknown[0]}",
                expected="one of " + ", ".join(names),
            )
        values: dict[str, Any] = {} if base is None else {n: getattr(base, n) for n in names}
        for key, value in data.items():
            values[key] = _mapping_value(key, value, f"{where}.{key}")
        _check_required_keys(values, where)
        _check_time_keys(values, where)
        values.setdefault("time", None)  # (time_unit position: no time column)
        if "delimiter" in data:
            values["delimiter"] = _delimiter(values["delimiter"], f"{where}.delimiter")
        if "decimal" in data:
            values["decimal"] = _decimal(values["decimal"], f"{where}.decimal")
        if values.get("link_kind", "fix_timestamp") not in LINK_KINDS:
            raise ConfigError(
                f"unknown link kind {values['link_kind']!r}",
                location=f"key {where}.link_kind",
                expected=" or ".join(LINK_KINDS),
            )
        return cls(**values)

    def reads_as_text(self, name: str) -> bool:
        """Whether a CSV reader keeps column ``name`` as text rather than parsing numbers: the
        label, the categorical columns, the time and link when they hold dates, and every column
        that is no feature (dropped, or left out of an explicit ``features``), so that an id or a
        note there is never read as a number; an effort column stays numeric."""
        dates = self.time_format is not None or self.time_unit == "datetime"
        if name == self.label or name in self.categorical:
            return True
        if name in (self.time, self.link):
            return dates
        if name in self.effort:
            return False
        return name in self.drop or (self.features is not None and name not in self.features)

    def to_dict(self) -> dict:
        """Plain dict (JSON/YAML friendly); ``Mapping.from_dict(m.to_dict()) == m``."""
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            out[f.name] = list(v) if isinstance(v, tuple) else v
        out["effort"] = list(self.effort) or None
        return out


@dataclass(frozen=True)
class Preset:
    """A named mapping for a known format, with the reading options it needs."""

    name: str
    mapping: Mapping
    drop_truncated_last_line: bool = False
    description: str = ""


PRESETS: dict[str, Preset] = {
    "commit-guru": Preset(
        "commit-guru",
        Mapping(
            time="author_date_unix_timestamp",
            label="contains_bug",
            positive="1",
            negative="0",
            link="fix_unix_timestamp",
            link_kind="fix_timestamp",
            link_none=-1.0,
            effort=("la", "ld"),
        ),
        description="Commit Guru JIT data (liu906/HITL...): 17 columns, fix-link timestamps; "
        "effort la + ld (absolute line counts)",
    ),
    "spdisc": Preset(
        "spdisc",
        Mapping(
            time="author_date_unix_timestamp",
            label="contains_bug",
            positive="True",
            negative="False",
            link="commit_type",
            link_kind="commit_type",
            link_none=None,
            drop=("commit_type",),
            effort=("la", "ld"),
        ),
        drop_truncated_last_line=True,
        description="Cabral et al. ICSE'19 spdisc ARFF: commit_type 3 rows are copies of earlier "
        "defect-inducing commits at the time each was found (their reveal times, no instances); "
        "effort la + ld (absolute line counts, as in Commit Guru; lt is per file)",
    ),
}


def resolve_mapping(
    preset: str | None = None, mapping: Mapping | dict | None = None, *, where: str = "mapping"
) -> tuple[Mapping, Preset | None]:
    """The mapping to use: ``mapping`` (a Mapping, or a dict over the preset's mapping), and the
    preset. Errors of ``mapping`` name the key ``where`` (a study's ``datasets.<name>.mapping``)."""
    p = None
    if preset is not None:
        if preset not in PRESETS:
            raise ConfigError(
                f"unknown preset {preset!r}",
                location="key preset",
                expected="one of " + ", ".join(PRESETS),
            )
        p = PRESETS[preset]
    if isinstance(mapping, Mapping):
        return _check_copies_kept(mapping, p, where), p
    if mapping is not None:
        base = None if p is None else p.mapping
        return _check_copies_kept(Mapping.from_dict(mapping, where=where, base=base), p, where), p
    if p is None:
        raise ConfigError(
            "no mapping and no preset",
            location="key mapping",
            expected="a preset (" + ", ".join(PRESETS) + ") or a mapping",
        )
    return p.mapping, p


def _check_copies_kept(mapping: Mapping, preset: Preset | None, where: str) -> Mapping:
    """``mapping``, unless it drops the ``spdisc`` preset's link: without it, the file's copies
    (commit type 3) would be read as commits, each found defect twice (a ConfigError at
    ``key <where>.link``)."""
    if preset is None or preset.mapping.link_kind != COMMIT_TYPE:
        return mapping
    if (mapping.link, mapping.link_kind) != (preset.mapping.link, COMMIT_TYPE):
        raise ConfigError(
            f"the {preset.name} preset's link ({preset.mapping.link}, link_kind {COMMIT_TYPE}) "
            f"replaced by {mapping.link!r} (link_kind {mapping.link_kind!r})",
            location=f"key {where}.link",
            expected=f"no link or link_kind over the {preset.name} preset: its link is the "
            "file's copies (commit type 3), which reveal its commits; read as commits, each "
            'found defect would count twice (docs/data.md, "spdisc\'s copies")',
        )
    return mapping


def kept_copies(metadata: dict) -> bool:
    """Whether a stream's metadata says it was converted from an spdisc file without reading its
    copies as reveals (by delaycv 0.1.0, whose ``spdisc`` preset kept them as commits): each
    found defect is in it twice, and it has no fix time."""
    return metadata.get("preset") == "spdisc" and metadata.get("link_kind") != COMMIT_TYPE


def check_copies_read(metadata: dict, path: str) -> None:
    """An InputError naming ``path`` when its stream kept an spdisc file's copies as commits
    (:func:`kept_copies`): its numbers would be wrong, and converting the file again mends it."""
    if kept_copies(metadata):
        raise InputError(
            "converted from an spdisc file by a delaycv that kept the file's copies (commit "
            f"type 3) as commits: each found defect is in it twice ({metadata.get('rows')} rows, "
            f"{metadata.get('positives')} positives), and it has no fix time",
            path=path,
            expected=f"the stream converted again from its source ({metadata.get('source')}) "
            "with delaycv convert SRC DEST --preset spdisc, which reads the copies as the "
            'reveals of their commits (docs/data.md, "spdisc\'s copies")',
        )
