"""``delaycv convert SRC DEST.parquet``: a raw ARFF/CSV file into the canonical Parquet stream (the
workflow's convert stage, :func:`delaycv.stages.convert.convert`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from delaycv.cli import options
from delaycv.common.errors import InputError
from delaycv.data.mapping import DECIMAL_MARKS, INF_MODES, LINK_KINDS, NO_EFFORT, PRESETS
from delaycv.data.timeunits import MAPPING_TIME_UNITS


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "convert",
        help="convert an ARFF or CSV file into a Parquet stream",
        description=(
            "Convert a raw ARFF (Weka/MOA) or CSV file into the canonical Parquet stream "
            "(time, label, label_time, features). Give a --preset for the known formats, or "
            "a mapping (--mapping FILE.yaml and/or the column options below, which override it)."
        ),
    )
    parser.add_argument(
        "src", help="the raw file (.arff or .csv, or either compressed: .csv.gz, .bz2, .xz)"
    )
    parser.add_argument(
        "dest",
        metavar="DEST.parquet",
        help="the Parquet file to write (written atomically; its name ends in .parquet)",
    )
    parser.add_argument(
        "--dataset",
        help="dataset name (default: the source file's name without its suffixes, "
        "data/npm.csv.gz: npm)",
    )
    parser.add_argument("--preset", choices=sorted(PRESETS), help="a known format's mapping")
    parser.add_argument(
        "--format",
        choices=["arff", "csv"],
        help="default: the file suffix (before .gz, .bz2 or .xz)",
    )
    parser.add_argument("--mapping", metavar="FILE", help="YAML/JSON file with mapping keys")
    _mapping_options(parser.add_argument_group("mapping (override the preset or --mapping)"))
    _damaged_input_options(parser)
    options.add_summary_options(parser)
    parser.set_defaults(run=run)
    return parser


def summary_line(meta: dict, dest: str) -> str:
    """The line ``delaycv convert`` prints of the stream it wrote to ``dest`` (``meta``: the
    stream's metadata): its instances, positives and their share, those with a reveal time, its
    features and their missing values, its effort.

    >>> meta = {"dataset": "fraud", "rows": 20000, "positives": 8640,
    ...     "positives_with_label_time": 7362, "features": ["a", "b"],
    ...     "missing": {"a": 408, "b": 3}, "infinite_as_missing": {}, "effort": None}
    >>> summary_line(meta, "fraud.parquet")  # doctest: +NORMALIZE_WHITESPACE
    'delaycv: fraud: 20,000 instances, 8,640 positives (43.2 %), 7,362 with a reveal time,
     2 features (411 missing values: a 408, b 3), no effort -> fraud.parquet'
    """
    rows, positives = int(meta["rows"]), int(meta["positives"])
    share = f" ({100 * positives / rows:.1f} %)" if rows else ""
    parts = [f"{rows:,} instances", f"{positives:,} positives{share}"]
    parts.append(f"{int(meta.get('positives_with_label_time') or 0):,} with a reveal time")
    if meta.get("copy_rows"):
        parts[-1] += f" (from {int(meta['copy_rows']):,} copy rows)"
    missing = {k: int(v) for k, v in (meta.get("missing") or {}).items() if v}
    count = len(meta.get("features") or ())
    features = f"{count:,} feature{'' if count == 1 else 's'}"
    if missing:
        each = ", ".join(f"{k} {v:,}" for k, v in list(missing.items())[:4])
        more = ", ..." if len(missing) > 4 else ""
        features += f" ({sum(missing.values()):,} missing values: {each}{more})"
    infinite = sum(int(v) for v in (meta.get("infinite_as_missing") or {}).values())
    if infinite:
        features += f", {infinite:,} infinite read as missing"
    parts.append(features)
    effort = meta.get("effort")
    parts.append(f"effort {effort}" if effort else "no effort")  # (its columns: "la + ld")
    return f"delaycv: {meta['dataset']}: {', '.join(parts)} -> {dest}"


def _mapping_options(g) -> None:
    """The mapping's keys as options: they override the preset or ``--mapping``."""
    g.add_argument("--time", help="column of arrival times (Unix seconds or dates)")
    g.add_argument(
        "--time-unit",
        choices=MAPPING_TIME_UNITS,
        help="unit of the time and link numbers: s (default), ms, us, ns; datetime: the column "
        "holds dates (ISO 8601); the stream stores seconds; position: the file has no time "
        "column (MOA's benchmark streams), each instance's time is its position, windows are "
        "counts of instances (500i)",
    )
    g.add_argument("--time-format", help="strptime format when the time column holds dates")
    g.add_argument("--label", help="column of the class")
    g.add_argument("--positive", help="the positive class (label 1)")
    g.add_argument("--negative", help="the negative class (default: inferred)")
    g.add_argument("--link", help="feedback-link column (never a feature)")
    g.add_argument("--link-kind", choices=LINK_KINDS, help="meaning of the link column")
    g.add_argument(
        "--drop",
        action="append",
        default=None,
        metavar="COL",
        help="a column that is not a feature (repeatable)",
    )
    g.add_argument(
        "--categorical",
        action="append",
        default=None,
        metavar="COL",
        help="a CSV column read as text categories (repeatable)",
    )
    g.add_argument(
        "--delimiter",
        metavar="CHAR",
        help="CSV field separator (default ','; e.g. ';', or '\\t' for a tab)",
    )
    g.add_argument(
        "--decimal",
        choices=DECIMAL_MARKS,
        help="the decimal mark of a CSV's numbers (default '.'; ',' as Excel writes them in "
        "many locales, with --delimiter ';')",
    )
    g.add_argument(
        "--effort",
        type=effort,
        default=(),
        metavar="COL[+COL...]",
        help="the numeric column(s) whose sum is each instance's effort (the presets: la+ld), "
        "or none: a stream without effort",
    )


def _damaged_input_options(parser) -> None:
    """What to do with a cut-short last line, rows out of time order and infinite values."""
    parser.add_argument(
        "--drop-truncated-last-line",
        action="store_true",
        help="drop a cut-short last line with a warning instead of failing",
    )
    parser.add_argument(
        "--sort",
        action="store_true",
        help="sort rows stably by time instead of failing on disorder",
    )
    parser.add_argument(
        "--inf",
        choices=INF_MODES,
        default="error",
        help="an infinite feature value is an error (default) or read as a missing value",
    )


def effort(text: str) -> list[str] | None:
    """``--effort``: ``la+ld`` -> ``["la", "ld"]``, ``none`` (any case) -> None (no effort)."""
    if text.strip().lower() == NO_EFFORT:
        return None
    names = [part.strip() for part in text.split("+")]
    if not all(names):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a column or columns (expected COL or COL+COL..., e.g. la+ld, or none)"
        )
    return names


def _mapping_from_args(args) -> dict | None:
    mapping: dict = {}
    if args.mapping:
        path = Path(args.mapping)
        from delaycv.study.yaml_file import read_yaml

        # strict: a syntax error's line and column, a duplicate key, an empty file
        loaded = read_yaml(path, expected="a YAML mapping: time, label, positive, ...")
        if not isinstance(loaded, dict):
            raise InputError(
                "not a mapping of keys", path=str(path), expected="keys time, label, positive, ..."
            )
        mapping.update(loaded.get("mapping", loaded))
    for key in (
        "time",
        "time_unit",
        "time_format",
        "label",
        "positive",
        "negative",
        "link",
        "link_kind",
        "drop",
        "categorical",
        "delimiter",
        "decimal",
    ):
        value = getattr(args, key)
        if value is not None:
            mapping[key] = value
    if args.effort != ():  # given: a list of columns, or None (no effort)
        mapping["effort"] = args.effort
    return mapping or None


def check_parquet_name(dest: str) -> None:
    """The output is a Parquet file: a name ending in anything but ``.parquet`` (``out.csv``)
    is refused before any work."""
    suffix = Path(dest).suffix
    if suffix.lower() != ".parquet":
        ends = f"ends in {suffix!r}" if suffix else "has no suffix"
        raise InputError(
            f"the stream is written as Parquet, and this name {ends}",
            path=dest,
            location="argument DEST.parquet",
            expected="a file name ending in .parquet",
        )


def run(args) -> int:
    from delaycv.common.atomic import check_output

    check_parquet_name(args.dest)
    check_output(args.dest)
    from delaycv.stages.convert import convert  # (numpy, pandas, pyarrow) once the path is checked

    spec = {
        "preset": args.preset,
        "mapping": _mapping_from_args(args),
        "drop_truncated_last_line": args.drop_truncated_last_line,
        "sort": args.sort,
        "format": args.format,
        "inf": args.inf,
    }
    meta = convert(spec, args.dest, dataset=args.dataset, raw=args.src)
    if args.json:
        keys = ("dataset", "rows", "positives", "positives_with_label_time", "dangling_links")
        keys += ("missing", "infinite_as_missing")
        summary = {k: meta[k] for k in keys} | {"effort": meta.get("effort")}
        if "copy_rows" in meta:  # (spdisc's copies: reveals, left out of the stream)
            summary["copy_rows"] = meta["copy_rows"]
        print(json.dumps(summary), file=sys.stdout)
    elif not args.quiet:
        print(summary_line(meta, args.dest), file=sys.stdout)
    return 0
