"""The datasets of a study: their files, their efforts, and one stream under one name.

Given the working directory, every dataset file exists and can be read, a ``.parquet`` one being
a canonical stream (as ``delaycv convert`` writes it, used as it is: :func:`stream_file`); a raw
file (ARFF, CSV) needs a preset or a column mapping (:func:`check_dataset_file`, which says
whether the stream has an effort). No stream may be given under two names
(:func:`check_same_streams`): it would count twice in the rankings.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from delaycv.common.errors import ConfigError, InputError
from delaycv.study.mistakes import Mistakes, with_source
from delaycv.study.runs import canonical_json

#: the options of a raw file's conversion (none applies to a canonical stream, used as it is)
CONVERSION_KEYS: tuple[str, ...] = (
    "format",
    "preset",
    "mapping",
    "drop_truncated_last_line",
    "sort",
)


def stream_file(dataset: Mapping) -> str | None:
    """The path of a dataset given as a canonical stream (``.parquet``, used as it is).

    Parameters
    ----------
    dataset : Mapping
        A dataset's spec of the config.

    Returns
    -------
    str or None
        Its ``path`` if that is a ``.parquet`` file, else None (a raw file or a generated stream).

    Examples
    --------
    >>> stream_file({"path": "data/jdt.parquet"}), stream_file({"path": "jdt.arff"})
    ('data/jdt.parquet', None)
    """
    path = dataset.get("path")
    return path if isinstance(path, str) and path.lower().endswith(".parquet") else None


def check_dataset_file(
    name: str, dataset: Mapping, source: str, cwd: str | os.PathLike | None
) -> bool | None:
    """Check a dataset given by its file, and say whether its stream has an effort.

    A canonical stream (``.parquet``) takes no conversion option and no effort (its file has
    one or not); a raw file (ARFF, CSV) needs a known format, and a preset or a mapping, whose
    effort columns are checked.

    Parameters
    ----------
    name : str
        The dataset's name.
    dataset : Mapping
        Its spec (with ``path``).
    source : str
        The file the errors name.
    cwd : str or os.PathLike, optional
        The working directory the path is relative to; ``None``: the file is not looked at.

    Returns
    -------
    bool or None
        Whether the stream has an effort; None when not known (a ``.parquet`` not looked at
        without the working directory).

    Raises
    ------
    ConfigError
        The first mistake, naming ``source`` and the key.
    """
    key = f"datasets.{name}"
    if cwd is not None:
        _check_readable(key, dataset["path"], source, cwd)
    if stream_file(dataset):
        return _stream_effort(key, dataset, source, cwd)
    return _raw_effort(key, dataset, source)


def _check_readable(key: str, path: str, source: str, cwd: str | os.PathLike) -> None:
    """The dataset's file exists (a file, not a folder) and can be read."""
    full = Path(cwd) / path
    if not full.is_file():
        raise ConfigError(
            f"a folder, not a file: {path!r}" if full.is_dir() else f"no such file {path!r}",
            path=source,
            location=f"key {key}.path",
            expected=f"an existing file; paths are relative to the working directory {cwd}",
        )
    try:
        with open(full, "rb") as handle:
            handle.read(1)
    except OSError as err:
        raise ConfigError(
            f"cannot read {path!r}: {err.strerror}",
            path=source,
            location=f"key {key}.path",
            expected="a file this user can read",
        ) from None


def _stream_effort(
    key: str, dataset: Mapping, source: str, cwd: str | os.PathLike | None
) -> bool | None:
    """A canonical stream's checks (no effort key, no conversion option, a stream file): whether
    it has an effort (None without the working directory)."""
    path = dataset["path"]
    if "effort" in dataset:
        raise ConfigError(
            "a canonical stream (.parquet) has the effort its file holds: the effort is set "
            "when the stream is converted",
            path=source,
            location=f"key {key}.effort",
            expected="no effort key beside a .parquet path (convert the raw file with "
            "delaycv convert --effort COL+COL or --effort none, or give the raw file here "
            "with its effort)",
        )
    extra = [k for k in CONVERSION_KEYS if k in dataset]
    if extra:
        raise ConfigError(
            "a canonical stream (.parquet) is used as it is: it takes no conversion option",
            path=source,
            location=f"key {key}.{extra[0]}",
            expected="only path, or the raw ARFF/CSV file with its conversion options",
        )
    if cwd is None:
        return None
    from delaycv.data.stream import check_stream_file, has_effort

    try:
        return has_effort(check_stream_file(Path(cwd) / path))
    except InputError as err:
        raise ConfigError(
            f"{path}: {err.message}",
            path=source,
            location=f"key {key}.path",
            expected=err.expected,
        ) from None


def _raw_effort(key: str, dataset: Mapping, source: str) -> bool:
    """A raw file's checks (its format, its preset or mapping, its effort): whether its stream
    will have an effort."""
    from delaycv.data.mapping import effort_columns

    path = dataset["path"]
    fmt = dataset.get("format") or Path(path).suffix.lstrip(".").lower()
    if fmt not in ("arff", "csv"):
        raise ConfigError(
            f"cannot tell the format of {path!r}",
            path=source,
            location=f"key {key}.path",
            expected="a .arff or .csv file (or format: arff|csv), "
            "or a .parquet stream written by delaycv convert",
        )
    mapping = _raw_mapping(key, dataset, source)
    if "effort" not in dataset:
        return bool(mapping.effort)
    if "effort" in dataset.get("mapping", {}):
        raise ConfigError(
            "the effort is given twice (effort and mapping.effort)",
            path=source,
            location=f"key {key}.effort",
            expected="one of the two",
        )
    return bool(
        with_source(
            lambda value, where: effort_columns(value, where),
            dataset["effort"],
            where=f"{key}.effort",
            source=source,
        )
    )


def _raw_mapping(key: str, dataset: Mapping, source: str):
    """The column mapping of a raw file: its ``mapping`` over its ``preset``'s, or the preset's."""
    from delaycv.data.mapping import PRESETS
    from delaycv.data.mapping import Mapping as ColumnMapping

    preset = dataset.get("preset")
    if preset is not None and preset not in PRESETS:
        raise ConfigError(
            f"unknown preset {preset!r}",
            path=source,
            location=f"key {key}.preset",
            expected="one of " + ", ".join(PRESETS),
        )
    if "mapping" in dataset:
        base = None if preset is None else PRESETS[preset].mapping
        return with_source(
            lambda m, where: ColumnMapping.from_dict(m, where=where, base=base),
            dataset["mapping"],
            where=f"{key}.mapping",
            source=source,
        )
    if preset is None:
        raise ConfigError(
            "a raw file needs a preset or a mapping",
            path=source,
            location=f"key {key}",
            expected=f"preset: {' or '.join(PRESETS)}, or mapping: {{time, label, positive, ...}}",
        )
    return PRESETS[preset].mapping


def check_same_streams(
    config: dict,
    source: str,
    cwd: str | os.PathLike | None,
    skip: set[str],
    mistakes: Mistakes,
) -> None:
    """Refuse a dataset whose stream is another dataset's.

    One stream under two dataset names would count twice in the rankings (Friedman's n): the
    same generator parameters (defaults included), or the same file (the same resolved path, or
    the same content: size, then SHA-256) with the same conversion options (``effort`` aside:
    it leaves the instances as they are). Files are compared only given the working directory.

    Parameters
    ----------
    config : dict
        The config (its ``datasets``).
    source : str
        The file the errors name.
    cwd : str or os.PathLike, optional
        The working directory the paths are relative to (None: files are not compared).
    skip : set of str
        Datasets left out (a mistake of their own).
    mistakes : Mistakes
        Where each dataset found twice goes (one mistake each).
    """
    datasets = config["datasets"]
    several = sum("generate" in d for n, d in datasets.items() if n not in skip) > 1
    generated: dict[str, str] = {}
    files: list[tuple[str, Path, str]] = []
    digests: dict[Path, str] = {}
    for name, dataset in datasets.items():
        if name in skip:
            continue
        if "generate" in dataset:
            if several:  # else nothing to compare it with (and no import of the generator)
                with mistakes.guard():
                    _same_generated(name, dataset, generated, source)
        elif cwd is not None:
            with mistakes.guard():
                _same_file(name, datasets, files, digests, source, cwd)


def _same_generated(name: str, dataset: Mapping, seen: dict[str, str], source: str) -> None:
    """Refuse a generated dataset with the generator parameters of an earlier one (``seen``:
    the first dataset of each parameters' text)."""
    params = canonical_json(_generator_params(dataset["generate"]))
    other = seen.setdefault(params, name)
    if other != name:
        raise ConfigError(
            f"the same generated stream as dataset {other!r} (the same generator "
            "parameters, defaults included)",
            path=source,
            location=f"key datasets.{name}.generate",
            expected=_ONE_NAME.format(a=other, b=name),
        )


def _same_file(
    name: str,
    datasets: Mapping,
    files: list[tuple[str, Path, str]],
    digests: dict[Path, str],
    source: str,
    cwd: str | os.PathLike,
) -> None:
    """Refuse a dataset whose file (its path or its content) and conversion options are those of
    an earlier one of ``files`` (name, resolved path, options' text); else add it there."""
    dataset = datasets[name]
    full = (Path(cwd) / dataset["path"]).resolve()
    options = {k: v for k, v in dataset.items() if k not in ("path", "effort")}
    if isinstance(options.get("mapping"), dict):
        options["mapping"] = {k: v for k, v in options["mapping"].items() if k != "effort"}
    options_text = canonical_json(options)
    for other, other_full, other_options in files:
        if other_options != options_text:
            continue
        if other_full == full:
            how = f"the same file as dataset {other!r} ({dataset['path']!r})"
        elif _same_content(full, other_full, digests):
            other_path = datasets[other]["path"]
            how = (
                f"the same content as the file of dataset {other!r}, {other_path!r} (the "
                "same size and SHA-256)"
            )
        else:
            continue
        raise ConfigError(
            how + (", with the same conversion options" if options else ""),
            path=source,
            location=f"key datasets.{name}.path",
            expected=_ONE_NAME.format(a=other, b=name),
        )
    files.append((name, full, options_text))


_ONE_NAME = (
    "each stream under one name (two names count one stream twice in the rankings): "
    "remove datasets.{b} or datasets.{a}"
)


def _generator_params(given: Mapping) -> dict:
    """The parameters :func:`delaycv.data.synthetic.generate_stream` runs with: ``given`` over its
    defaults (``days``: rows / 6), without ``dataset`` and ``effort`` (they leave the instances
    as they are)."""
    import inspect

    from delaycv.data.synthetic import generate_stream

    params = {
        name: p.default
        for name, p in inspect.signature(generate_stream).parameters.items()
        if p.default is not inspect.Parameter.empty and name not in ("dataset", "effort")
    }
    params.update({k: v for k, v in given.items() if k not in ("dataset", "effort")})
    if params.get("days") is None and isinstance(params.get("rows"), int):
        params["days"] = params["rows"] / 6.0
    return {
        k: float(v) if isinstance(v, int) and not isinstance(v, bool) else v
        for k, v in params.items()
    }


def _same_content(a: Path, b: Path, digests: dict[Path, str]) -> bool:
    """Whether files ``a`` and ``b`` hold the same bytes: the sizes first (free), then SHA-256."""
    try:
        if a.stat().st_size != b.stat().st_size:
            return False
        for path in (a, b):
            if path not in digests:
                sha = hashlib.sha256()
                with open(path, "rb") as handle:
                    for block in iter(lambda: handle.read(1 << 20), b""):
                        sha.update(block)
                digests[path] = sha.hexdigest()
    except OSError:
        return False
    return digests[a] == digests[b]
