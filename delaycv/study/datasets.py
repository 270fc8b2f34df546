"""The datasets of a study: their files, their efforts, and one stream under one name.

Given the working directory, every dataset file exists and can be read, a ``.parquet`` one being
a canonical stream (as ``delaycv convert`` writes it, used as it is: :func:`stream_file`); a raw
file (ARFF, CSV) needs a preset or a column mapping (:func:`check_dataset_file`, which says
whether the stream has an effort and fix times: :class:`StreamFacts`). No stream may be given
under two names (:func:`check_same_streams`): it would count twice in the rankings.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from delaycv.common.errors import ConfigError, DelaycvError, InputError
from delaycv.study.mistakes import Mistakes, with_source
from delaycv.study.runs import canonical_json


@dataclass(frozen=True)
class StreamFacts:
    """What a dataset's spec and file tell of its stream without reading its data
    (:func:`check_dataset_file`); None: not known (a ``.parquet`` not looked at without the
    working directory, a file the checks refused)."""

    #: whether the stream has an effort
    effort: bool | None
    #: whether it has fix times (``label_time``): a generated stream has; a raw file where its
    #: mapping names a link column (both presets do: ``spdisc``'s is its copies); a
    #: canonical stream as its file's metadata says
    fix_times: bool | None
    #: whether its times are its instances' positions (a raw file's mapping with ``time_unit:
    #: position``; a canonical stream whose metadata says ``time: position``)
    positions: bool | None = False
    #: the features known to be categorical (their values text): a canonical stream's, from its
    #: schema; an ARFF file's nominal attributes not read as numbers, from its header
    #: (:func:`~delaycv.data.convert.header_categories`); a CSV file's columns the mapping
    #: names categorical whose first lines hold a value other than a boolean
    #: (:func:`~delaycv.data.convert.csv_head_categories`); none without the working directory
    categorical: tuple[str, ...] = ()
    #: the features known to be numbers: a canonical stream's others, a raw file's numeric
    #: columns (:func:`~delaycv.data.convert.header_numbers`); none known of a generated
    #: stream, nor without the working directory
    numeric: tuple[str, ...] = ()


#: what is known of a dataset that was not checked
UNKNOWN = StreamFacts(effort=None, fix_times=None, positions=None)

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


def dataset_facts(
    name: str, dataset: Mapping, source: str, cwd: str | os.PathLike | None
) -> StreamFacts:
    """Whether a dataset's stream has an effort and fix times: a generated one has both (its
    effort la + ld, unless ``effort: null``), one given by its file is checked
    (:func:`check_dataset_file`)."""
    if "path" in dataset:
        return check_dataset_file(name, dataset, source, cwd)
    return StreamFacts(effort="effort" not in dataset, fix_times=True)


def datasets_with_effort(config: Mapping, cwd: str | os.PathLike | None) -> list[str]:
    """The names of a validated study's datasets whose stream has an effort (what the report
    says the effort-aware metrics are computed for), in the config's order. Only a ``.parquet``
    stream's file is looked at (its metadata says); a raw file's spec says."""
    return [
        name
        for name, dataset in config["datasets"].items()
        if dataset_facts(name, dataset, "config", cwd if stream_file(dataset) else None).effort
    ]


def check_dataset_file(
    name: str, dataset: Mapping, source: str, cwd: str | os.PathLike | None
) -> StreamFacts:
    """Check a dataset given by its file, and say whether its stream has an effort and fix
    times.

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
    StreamFacts
        Whether the stream has an effort and fix times.

    Raises
    ------
    ConfigError
        The first mistake, naming ``source`` and the key.
    """
    key = f"datasets.{name}"
    if cwd is not None:
        _check_readable(key, dataset["path"], source, cwd)
    if stream_file(dataset):
        return _stream_facts(key, dataset, source, cwd)
    return _raw_facts(key, dataset, source, cwd)


def _check_readable(key: str, path: str, source: str, cwd: str | os.PathLike) -> None:
    """The dataset's file exists (a file, not a folder) and can be read."""
    full = Path(cwd) / path
    if not full.is_file():
        expected = f"an existing file; paths are relative to the working directory {cwd}"
        home = Path(path).expanduser()
        if str(path).startswith("~") and home != Path(path):
            # (as in Snakemake's inputs: a shell would expand it, the workflow does not)
            expected += f", and '~' is not expanded: write the full path, {home}"
        raise ConfigError(
            f"a folder, not a file: {path!r}" if full.is_dir() else f"no such file {path!r}",
            path=source,
            location=f"key {key}.path",
            expected=expected,
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


def _stream_facts(
    key: str, dataset: Mapping, source: str, cwd: str | os.PathLike | None
) -> StreamFacts:
    """A canonical stream's checks (no effort key, no conversion option, a stream file): what
    its file's metadata says (nothing without the working directory)."""
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
        return UNKNOWN
    from delaycv.data.stream import has_effort
    from delaycv.data.stream_file import stream_file_facts

    try:
        meta, categorical = stream_file_facts(Path(cwd) / path)
        found = meta.get("positives_with_label_time")
        return StreamFacts(
            has_effort(meta),
            None if found is None else int(found) > 0,
            meta.get("time") == "position",
            categorical,
            tuple(f for f in meta["features"] if f not in categorical),
        )
    except InputError as err:
        raise ConfigError(
            f"{path}: {err.message}",
            path=source,
            location=f"key {key}.path",
            expected=err.expected,
        ) from None


def _raw_facts(
    key: str, dataset: Mapping, source: str, cwd: str | os.PathLike | None
) -> StreamFacts:
    """A raw file's checks (its format, its preset or mapping, its effort): whether its stream
    will have an effort, fix times (a fix-link column), and the categorical features an ARFF
    file's header names (with the working directory, which :func:`_check_header` checks)."""
    from delaycv.data.formats import raw_format
    from delaycv.data.mapping import effort_columns

    path = dataset["path"]
    fmt = raw_format(path, dataset.get("format"))
    if fmt not in ("arff", "csv"):
        raise ConfigError(
            f"cannot tell the format of {path!r}",
            path=source,
            location=f"key {key}.path",
            expected="a .arff or .csv file, or one compressed (.csv.gz, .bz2, .xz) (or format: "
            "arff|csv), or a .parquet stream written by delaycv convert",
        )
    mapping = _raw_mapping(key, dataset, source)
    fix_times = mapping.link is not None
    positions = mapping.time is None  # (time_unit position)
    if "effort" in dataset:
        if "effort" in dataset.get("mapping", {}):
            raise ConfigError(
                "the effort is given twice (effort and mapping.effort)",
                path=source,
                location=f"key {key}.effort",
                expected="one of the two",
            )
        effort = with_source(
            lambda value, where: effort_columns(value, where),
            dataset["effort"],
            where=f"{key}.effort",
            source=source,
        )
        mapping = dataclasses.replace(mapping, effort=effort)  # as the conversion applies it
    kinds = _check_header(key, dataset, fmt, mapping, source, cwd) if cwd is not None else ((), ())
    return StreamFacts(bool(mapping.effort), fix_times, positions, *kinds)


def _check_header(
    key: str, dataset: Mapping, fmt: str, mapping, source: str, cwd
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Check a raw file's header as the conversion checks it before it reads the data, and say
    which features will be categorical (an ARFF header's, a CSV file's header and first lines)
    and which numbers (:func:`~delaycv.data.convert.header_numbers`). A header the conversion
    would refuse, or a column the mapping names that the file lacks (a preset given to another
    kind of file), is a ConfigError before any job runs, at the mapping key that named the
    column (``mapping.link``), else at the preset."""
    from delaycv.data.arff import read_arff_header
    from delaycv.data.convert import (
        check_mapping_columns,
        csv_head_categories,
        header_categories,
        header_numbers,
    )
    from delaycv.data.csv import read_csv_head, read_csv_header
    from delaycv.data.readers import NUMERIC, Column

    path = dataset["path"]
    full = Path(cwd) / path
    try:
        if fmt == "csv":
            names = read_csv_header(full, mapping.delimiter)
            check_mapping_columns(names, mapping, path)
            head = read_csv_head(full, mapping.categorical, mapping.delimiter)
            numbers = header_numbers([Column(n, NUMERIC) for n in names], mapping, path)
            return csv_head_categories(names, head, mapping, path), numbers
        columns = read_arff_header(full)
        check_mapping_columns([c.name for c in columns], mapping, path)
        return header_categories(columns, mapping, path), header_numbers(columns, mapping, path)
    except InputError as err:
        location, message = f"key {key}.path", err.message
        if err.location and err.location.startswith("key mapping."):
            named = err.location.removeprefix("key mapping.")
            if named == "effort" and "effort" in dataset:  # the dataset's own effort key
                location = f"key {key}.effort"
                message = message.replace("named by mapping key 'effort'", "named by key effort")
            elif named in dataset.get("mapping", {}) or "preset" not in dataset:
                location = f"key {key}.mapping.{named}"
            else:
                location = f"key {key}.preset"
                preset = f"the {dataset['preset']} preset's {named}"
                said = f"mapping key {named!r}"
                message = (
                    message.replace(said, preset) if said in message else f"{message} ({preset})"
                )
        elif err.location:
            message = f"{err.location}: {message}"
        raise ConfigError(
            f"{path}: {message}", path=source, location=location, expected=err.expected
        ) from None


def _raw_mapping(key: str, dataset: Mapping, source: str):
    """The column mapping of a raw file: its ``mapping`` over its ``preset``'s, or the preset's."""
    from delaycv.data.mapping import PRESETS, resolve_mapping

    preset = dataset.get("preset")
    if preset is not None and preset not in PRESETS:
        raise ConfigError(
            f"unknown preset {preset!r}",
            path=source,
            location=f"key {key}.preset",
            expected="one of " + ", ".join(PRESETS),
        )
    if "mapping" in dataset:
        return with_source(
            lambda m, where: resolve_mapping(preset, m, where=where)[0],
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
    same generator parameters (defaults included), the same file (the same resolved path, or
    the same text whatever its line endings) with the same conversion options (``effort``
    aside: it leaves the instances as they are), or one content (:mod:`delaycv.data.identity`)
    where a canonical stream (``.parquet``) is one of the two: two such streams, or one and the
    raw file it was converted from. Files are compared only given the working directory. Two
    raw files in other forms (another column order, other quoting) are told apart only by their
    contents, which the runs record: ``merge`` and ``rank`` refuse them
    (:class:`delaycv.tables.merge.StreamNames`).

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
    digests: dict = {}
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
    digests: dict,
    source: str,
    cwd: str | os.PathLike,
) -> None:
    """Refuse a dataset whose stream is an earlier one's of ``files`` (name, resolved path,
    options' text); else add it there. The same stream: the same file (its path, or its text
    whatever its line endings) with the same conversion options; two canonical streams with one
    content (:mod:`delaycv.data.identity`); a canonical stream converted from the other's raw
    file into the same content."""
    dataset = datasets[name]
    full = (Path(cwd) / dataset["path"]).resolve()
    options = _conversion_options(dataset)
    options_text = canonical_json(options)
    for other, other_full, other_options in files:
        other_path = datasets[other]["path"]
        if other_options == options_text and other_full == full:
            how = f"the same file as dataset {other!r} ({dataset['path']!r})"
        elif other_options == options_text and _same_text(full, other_full, digests):
            how = (
                f"the same content as the file of dataset {other!r}, {other_path!r} (the same "
                "text, whatever its line endings)"
            )
        elif _one_stream(dataset, full, datasets[other], other_full, digests):
            how = (
                f"the same stream as dataset {other!r}, {other_path!r} (the same content, "
                "whatever the files' form)"
            )
        else:
            continue
        raise ConfigError(
            how + (", with the same conversion options" if options and "file" in how else ""),
            path=source,
            location=f"key datasets.{name}.path",
            expected=_ONE_NAME.format(a=other, b=name),
        )
    files.append((name, full, options_text))


def _conversion_options(dataset: Mapping) -> dict:
    """A raw dataset's conversion options, without its path and effort (the effort leaves the
    instances as they are)."""
    options = {k: v for k, v in dataset.items() if k not in ("path", "effort")}
    if isinstance(options.get("mapping"), dict):
        options["mapping"] = {k: v for k, v in options["mapping"].items() if k != "effort"}
    return options


def _one_stream(a: Mapping, a_full: Path, b: Mapping, b_full: Path, digests: dict) -> bool:
    """Whether two datasets of which one at least is a canonical stream (``.parquet``) have one
    content (:mod:`delaycv.data.identity`). A raw file is converted (in memory) only when the
    other, canonical, stream was converted from its bytes, whatever their line endings (its
    ``source_sha256``)."""
    if not (stream_file(a) or stream_file(b)):
        return False
    try:
        return _stream_digest(a, a_full, b, b_full, digests) == _stream_digest(
            b, b_full, a, a_full, digests
        )
    except (DelaycvError, OSError):  # a file that cannot be read has its own mistake
        return False


def _stream_digest(dataset: Mapping, full: Path, other: Mapping, other_full: Path, digests: dict):
    """The content digest of ``dataset``'s stream; a raw file's only when ``other`` is a canonical
    stream converted from its bytes, or from them with other line endings (else None, or an
    object equal to nothing: not the same stream)."""
    from delaycv.data.stream_file import open_stream

    key = ("content", full, canonical_json(_conversion_options(dataset)))
    if key in digests:
        return digests[key]
    if stream_file(dataset):
        digests[key] = open_stream(full).content_digest()
        return digests[key]
    if not stream_file(other):
        return None
    source = open_stream(other_full).metadata.get("source_sha256")
    _same_text(full, full, digests)  # (its text digest: the bytes with LF line endings)
    if source not in (_file_sha256(full, digests), digests.get(("text", full))):
        return object()  # (not converted from this file or a copy of it: never equal)
    from delaycv.data.convert import load_stream

    options = _conversion_options(dataset)
    digests[key] = load_stream(full, **options).content_digest()
    return digests[key]


def _file_sha256(path: Path, digests: dict) -> str:
    """The SHA-256 of the bytes of ``path`` (kept in ``digests``)."""
    key = ("bytes", path)
    if key not in digests:
        sha = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                sha.update(block)
        digests[key] = sha.hexdigest()
    return digests[key]


def _same_text(a: Path, b: Path, digests: dict) -> bool:
    """Whether files ``a`` and ``b`` hold the same bytes once their line endings are one (CRLF
    and CR read as LF: a copy made on another system is the same file)."""
    try:
        for path in (a, b):
            key = ("text", path)
            if key not in digests:
                sha = hashlib.sha256()
                with open(path, "rb") as handle:
                    data = handle.read()
                sha.update(data.replace(b"\r\n", b"\n").replace(b"\r", b"\n"))
                digests[key] = sha.hexdigest()
    except OSError:
        return False
    return digests[("text", a)] == digests[("text", b)]


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
