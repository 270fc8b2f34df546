"""The Python API: evaluate a river classifier with delayed labels in one call.

>>> import delaycv
>>> from river import tree
>>> from delaycv.data.stream_file import to_table
>>> from delaycv.data.synthetic import generate_stream
>>> frame = to_table(generate_stream(rows=2000, seed=1)).to_pandas()  # or pd.read_parquet(...)
>>> list(frame.columns[:5])
['time', 'label', 'label_time', 'effort', 'la']
>>> result = delaycv.evaluate(
...     frame,
...     tree.HoeffdingTreeClassifier(grace_period=50),
...     policy="hitl", pos_window="7d", neg_window="90d",
...     validation="bootstrap", folds=5, progress=False,
... )
>>> result
EvaluationResult(dataset='dataframe', learner='HoeffdingTreeClassifier', policy='hitl_7d_90d', seed=1, folds=5, checkpoints=4, rows=60)
>>> gmean = result.summary.query("metric == 'gmean' and checkpoint == 2000")
>>> print(gmean[["reference", "n_folds", "mean", "ci_low", "ci_high"]].round(3).to_string(index=False))
reference  n_folds  mean  ci_low  ci_high
 observed        5 0.622   0.501    0.743
     true        5 0.566   0.445    0.687
corrected        5 0.570   0.448    0.691

The G-mean a practitioner would report (against the labels observed under the policy) is higher
than what the model achieved (against the true labels): the bias of realistic evaluation. The
corrected estimate, computed from what the practitioner knows, is close to the true value
(docs/corrected.md).

``result.folds`` is the per-fold checkpoint table, ``result.summary`` the summary over folds (mean,
std, 95 % interval), ``result.predictions`` the prediction log (with ``predictions=True``), all
pandas DataFrames (columns: ``docs/architecture.md``).

The stream may be

- the path of a canonical Parquet stream (``delaycv convert``, ``delaycv generate``);
- a :class:`delaycv.data.stream.Stream`;
- a pandas DataFrame with a ``time`` column (Unix seconds or datetimes, non-decreasing), a
  ``label`` column (0/1 or booleans; other values with ``positive=``, which must occur; a
  missing label is an ``InputError`` naming its row) and optionally a
  ``label_time`` column (the time an external event reveals a positive label; NaN/NaT: never,
  and on every row of label 0: a value there is an ``InputError`` naming the row; a positive
  revealed before its own time, which a policy observes on arrival, is a warning giving their
  count and the first row: often a column that is no reveal time, such as Commit Guru's fix
  links);
  ``time=``, ``label=``, ``label_time=`` name other columns; a column ``effort`` is the
  instance's effort (the effort-aware measures, docs/metrics.md), ``effort=`` names another column
  or a list of columns to add (``["la", "ld"]``: they stay features); every other column is a
  feature (numbers and booleans as numbers, datetimes as Unix seconds and durations as seconds,
  as an ARFF date attribute converts, text and categories as categories);
- any iterable of ``(x, y)`` pairs, such as a river dataset: ``x`` a dict of features, ``y`` the
  label. If the ``x`` dicts hold a ``time`` key (or the key named by ``time=``), it is the arrival
  time and is not a feature; likewise ``label_time`` and ``effort`` (``effort=`` names other
  keys, added). Without a time key, the time of instance n is
  n (its position, 1-based): windows are then counts of instances (``"50i"``); a duration
  (``"7d"``, ``"50s"``) is refused, a ``ConfigError`` at its key.

The model is a river estimator instance (or a learner spec, see :mod:`delaycv.protocol.learners`): each fold
gets an untrained clone with its own seed (:func:`delaycv.protocol.learners.seeded_clone`); the instance
itself is never trained or changed. Its ``predict_proba_one`` must answer as
:func:`delaycv.protocol.learner_contract.positive_probability` says (a dict keyed by 0 and 1 with probabilities in
[0, 1], or an empty dict): anything else is a ``ConfigError`` naming the fold and the instance; a
fold in which it never gave a probability is a warning (logged, and in ``result.info["warnings"]``). Defaults (policy, validation, estimator, checkpoints) are
those of the command line and the workflow (:mod:`delaycv.common.defaults`).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from delaycv.common import defaults
from delaycv.common.errors import ConfigError, DelaycvError, InputError, shown

__all__ = ["evaluate", "as_stream"]

#: Warnings about a DataFrame's or pairs' content (also in ``result.info["warnings"]``)
log = logging.getLogger("delaycv.api")


def evaluate(
    stream: Any,
    model: Any,
    *,
    policy: Any = defaults.POLICY,
    window: str | int | None = None,
    pos_window: str | int | None = None,
    neg_window: str | int | None = None,
    validation: Any = None,
    folds: int | None = None,
    seed: int = defaults.SEED,
    estimator: Any = None,
    every: int | None = defaults.EVERY,
    predictions: bool = False,
    time: str | None = None,
    time_unit: str = "s",
    label: str = "label",
    label_time: str | None = None,
    effort: str | list[str] | None = None,
    positive: Any = None,
    dataset: str | None = None,
    progress: bool = True,
    jobs: int = 1,
    **options: Any,
):
    """Evaluate ``model`` on ``stream`` under a label ``policy`` with k-fold ``validation``.

    Everything is checked before any work (:func:`delaycv.protocol.settings.make_settings`), and the model
    is run once on the first instances, so that a parameter river accepts but cannot use fails at
    once, with river's message.

    Parameters
    ----------
    stream : str, os.PathLike, Stream, pandas.DataFrame or iterable of (x, y)
        A canonical Parquet path (read chunk by chunk), a :class:`~delaycv.data.stream.Stream`, a
        DataFrame or a river dataset (module docstring); ``time``, ``time_unit``, ``label``,
        ``label_time`` and ``positive`` say how to read the last two.
    model : river classifier or learner spec
        Cloned and seeded per fold (the instance itself is never trained), or a learner spec
        (:mod:`delaycv.protocol.learners`).
    policy : str, dict or Policy, default "ideal"
        A preset name with its windows given here (``"hitl"`` with ``pos_window`` and
        ``neg_window``; ``"delay"`` or ``"verification"`` with ``window``: no default window), a
        policy name (``"hitl_7d_90d"``), a spec dict or a :class:`~delaycv.protocol.policies.Policy`.
    window, pos_window, neg_window : str or None
        The windows of a preset named by ``policy`` (``"7d"``, ``"12h"``, ``"500i"``).
    validation : str, dict, Validation or None
        A scheme name (``"bootstrap"``, ``"cv"``, ``"split"``, ``"prequential"``), a dict or a
        :class:`~delaycv.protocol.validation.Validation`; None: bootstrap.
    folds : int or None
        The number of folds k (default 10; 1 for prequential).
    seed : int, default 1
        The run seed (the replicate).
    estimator : str, dict or None
        ``"fading"``, ``{"kind": "window", "width": 500}``, ...; None: fading 0.99.
    every : int or None, default 500
        A checkpoint every ``every`` instances (and at the last): an integer >= 1, as on the
        command line and in the workflow config (0 is refused); None: the last instance (and
        ``checkpoints``) only.
    predictions : bool, default False
        Also return the prediction log.
    time, label, label_time : str or None
        Column (DataFrame) or key (x dicts) names of the arrival time, the label and the reveal
        time.
    time_unit : {"s", "ms", "us", "ns"}, default "s"
        The unit of numeric times and reveal times (datetimes are converted exactly).
    effort : str, list of str or None
        The column(s) (DataFrame) or key(s) (x dicts) whose sum is each instance's effort (they
        stay features); None: a column or key ``effort`` if there is one (not a feature), else
        no effort (no effort-aware measures).
    positive : object or None
        The value of ``label`` that is the positive class (default: 0/1 or booleans).
    dataset : str or None
        The run key ``dataset`` (None: a stream file's own, else its name without ``.parquet``
        as on the command line, ``dataframe`` for a DataFrame, a
        river dataset's class name, ``stream`` for other pairs).
    progress : bool, default True
        Progress lines on stderr for runs over 3 s.
    jobs : int, default 1
        Folds in that many processes (the same result).
    **options
        ``threshold``, ``prediction_noise``, ``flush``, ``checkpoints``, ``same_learner_seed``,
        ``measure_memory``, ``timing``, ``folds_subset`` (:func:`delaycv.protocol.settings.make_settings`)
        and ``observer_factory``, ``on_rows`` (:func:`delaycv.engine.evaluate`).

    Returns
    -------
    EvaluationResult
        ``folds``, ``summary``, ``predictions`` (DataFrames) and ``info``
        (:class:`~delaycv.engine.EvaluationResult`).
    """
    from delaycv import engine
    from delaycv.engine.parallel import refuse_in_starting_worker
    from delaycv.engine.windows import check_position_times
    from delaycv.protocol.settings import make_settings

    refuse_in_starting_worker()  # (a script without a main guard, imported by a worker)
    _check_option_keywords(options)
    observer_factory = options.pop("observer_factory", None)
    on_rows = options.pop("on_rows", None)
    settings = make_settings(
        learner=model,
        policy=_policy_spec(policy, window, pos_window, neg_window),
        validation=_validation_spec(validation, folds),
        estimator=estimator,
        seed=seed,
        every=every,
        keep_predictions=predictions,
        jobs=jobs,
        run_keys={"dataset": dataset} if dataset is not None else None,
        **options,
    )
    stream, read_warnings = _input_stream(
        stream,
        time=time,
        time_unit=time_unit,
        label=label,
        label_time=label_time,
        effort=effort,
        positive=positive,
        dataset=dataset,
    )
    check_position_times(stream, settings.policy)  # before the probe: no work at all
    engine.probe_learner(stream, model)
    result = engine.evaluate(
        stream, settings, observer_factory=observer_factory, progress=progress, on_rows=on_rows
    )
    result.info["warnings"][:0] = read_warnings
    return result


def _check_option_keywords(options: dict[str, Any]) -> None:
    """The ``**options`` of :func:`evaluate` must be settings it does not take by name
    (:func:`delaycv.protocol.settings.make_settings`) or ``observer_factory``, ``on_rows``."""
    from delaycv.protocol.settings import SETTING_KEYS, check_keywords

    check_keywords(
        options,
        set(SETTING_KEYS)
        - {
            "learner",
            "policy",
            "validation",
            "estimator",
            "seed",
            "every",
            "keep_predictions",
            "jobs",
            "run_keys",
        }
        | {"observer_factory", "on_rows"},
        "a keyword of delaycv.evaluate or of delaycv.protocol.settings.make_settings",
    )


def _input_stream(stream: Any, **read: Any) -> tuple[Any, list[str]]:
    """The stream :func:`evaluate` runs on, and the warnings about its content (logged): a
    Parquet path opened to be read chunk by chunk (no ``effort`` option then), anything else
    as :func:`as_stream` reads it (``read``: its keywords)."""
    if isinstance(stream, str | os.PathLike):
        from delaycv.data.stream_file import open_stream

        _check_read_options(stream, read["time_unit"], read["effort"])
        opened = open_stream(stream)  # read chunk by chunk: memory independent of its length
        opened.metadata.setdefault("dataset", Path(stream).stem)  # (as the command names it)
        return opened, []
    return _read_stream(stream, **read)


def _check_read_options(stream: Any, time_unit: str, effort: Any) -> list[str] | None:
    """Check the reading options against the form of ``stream`` (a canonical stream, a path or
    a ``Stream``, stores seconds and has its own effort: no ``time_unit``, no ``effort=``);
    return the effort's column names."""
    from delaycv.data.stream import Stream

    _check_time_unit(time_unit)
    canonical = isinstance(stream, Stream | str | os.PathLike)
    if canonical and time_unit != "s":
        raise ConfigError(
            f"time_unit {time_unit!r} given with a canonical stream",
            location="key time_unit",
            expected="no time_unit: a canonical stream stores seconds",
        )
    names = _effort_names(effort)
    if canonical:
        _no_effort_option(effort)
    return names


def _policy_spec(policy: Any, window: Any, pos_window: Any, neg_window: Any) -> Any:
    from delaycv.protocol.policies import PRESETS

    given = {"window": window, "pos_window": pos_window, "neg_window": neg_window}
    windows = {k: v for k, v in given.items() if v is not None}
    if isinstance(policy, str) and policy in PRESETS:
        return {"preset": policy, **windows}
    if windows:
        raise ConfigError(
            f"{', '.join(windows)} given with the policy {policy!r}",
            location=f"key {next(iter(windows))}",
            expected="windows with a preset name (policy='hitl', pos_window=..., neg_window=...) "
            "or inside the policy (a name such as 'hitl_7d_90d', a dict, a Policy)",
        )
    return policy


def _validation_spec(validation: Any, folds: int | None) -> Any:
    from delaycv.protocol.validation import Validation

    if isinstance(validation, Validation):
        if folds is not None:
            raise ConfigError(
                "folds given with a Validation object",
                location="key folds",
                expected="folds inside the Validation, or validation as a name or dict",
            )
        return validation
    if validation is None:
        spec: dict = {}
    elif isinstance(validation, str):
        spec = {"scheme": validation}
    elif isinstance(validation, dict):
        spec = dict(validation)
    else:
        raise ConfigError(
            f"validation is {type(validation).__name__}",
            location="key validation",
            expected="a scheme name (bootstrap, cv, split, prequential), a dict or a Validation",
        )
    if folds is not None:
        if "folds" in spec and spec["folds"] != folds:
            raise ConfigError(
                f"folds={folds} and validation folds {spec['folds']}",
                location="key folds",
                expected="one number of folds",
            )
        spec["folds"] = folds
    return spec


# --------------------------------------------------------------------------- streams


def _check_time_unit(time_unit: Any) -> None:
    from delaycv.data.timeunits import FACTORS

    if time_unit not in FACTORS:
        raise ConfigError(
            f"unknown time unit {time_unit!r}",
            location="key time_unit",
            expected="s, ms, us or ns (the unit of numeric times; datetimes need none)",
        )


def as_stream(
    stream: Any,
    *,
    time: str | None = None,
    time_unit: str = "s",
    label: str = "label",
    label_time: str | None = None,
    effort: str | list[str] | None = None,
    positive: Any = None,
    dataset: str | None = None,
):
    """A :class:`~delaycv.data.stream.Stream` from any form :func:`evaluate` accepts (see there);
    what it warns of is logged."""
    return _read_stream(
        stream,
        time=time,
        time_unit=time_unit,
        label=label,
        label_time=label_time,
        effort=effort,
        positive=positive,
        dataset=dataset,
    )[0]


def _read_stream(
    stream: Any,
    *,
    time: str | None,
    time_unit: str,
    label: str,
    label_time: str | None,
    effort: str | list[str] | None,
    positive: Any,
    dataset: str | None,
) -> tuple[Any, list[str]]:
    """:func:`as_stream`'s stream and the warnings about a DataFrame's or pairs' content
    (:func:`_reveal_warnings`), logged."""
    from delaycv.data.mapping import check_copies_read
    from delaycv.data.stream import Stream
    from delaycv.data.stream_file import read_stream

    names = _check_read_options(stream, time_unit, effort)
    if isinstance(stream, Stream):  # (one read from a file is checked there)
        check_copies_read(stream.metadata, "the Stream given")
        return stream, []
    if isinstance(stream, str | os.PathLike):
        return read_stream(stream), []
    if isinstance(stream, pd.DataFrame):
        made = _from_frame(stream, time, label, label_time, names, positive, dataset, time_unit)
        where = f"column {label_time or 'label_time'}"
    elif isinstance(stream, Iterable) and not isinstance(stream, dict | bytes):
        made = _from_pairs(stream, time, label_time, names, positive, dataset, time_unit)
        where = f"key {label_time or 'label_time'}"
    else:
        made = None
    if made is not None:
        warnings = _reveal_warnings(made, where)
        for text in warnings:
            log.warning("%s", text)
        return made, warnings
    raise InputError(
        f"a stream cannot be a {type(stream).__name__}",
        location="argument stream",
        expected="a Parquet path, a Stream, a DataFrame or an iterable of (x, y)",
    )


def _reveal_warnings(stream, where: str) -> list[str]:
    """The warning about positives revealed before their own time (``where``: the column or key
    of the reveal times; :func:`~delaycv.data.stream.reveals_before_arrival_text`)."""
    from delaycv.data.stream import reveals_before_arrival, reveals_before_arrival_text

    rows = reveals_before_arrival(stream.time, stream.label, stream.label_time)
    if not rows.size:
        return []
    i = int(rows[0])
    return [
        reveals_before_arrival_text(
            where,
            int(rows.size),
            stream.metadata["positives"],
            f"row {i + stream.first_row}",
            float(stream.label_time[i]),
            float(stream.time[i]),
        )
    ]


def _seconds(values: pd.Series, what: str, unit: str = "s") -> np.ndarray:
    """Unix seconds (float64, NaN for missing) of numbers in ``unit`` or of datetimes (exact;
    sub-second parts rounded down); a time outside 1900-9999, or times of a coarser unit (all in
    1970 in ``unit``), is an InputError naming the row or the column and the likely unit."""
    from delaycv.data.timeunits import (
        DATE_TEXT,
        FACTORS,
        NAMES,
        RANGE_TEXT,
        coarser_unit,
        coarser_unit_message,
        implausible,
        implausible_message,
    )

    if pd.api.types.is_datetime64_any_dtype(values.dtype):
        if getattr(values.dt, "tz", None) is not None:
            values = values.dt.tz_convert("UTC").dt.tz_localize(None)
        stamps = values.to_numpy()
        out = stamps.astype("datetime64[s]").astype(np.int64).astype(np.float64)
        out[np.isnat(stamps)] = np.nan
        return out
    try:
        raw = pd.to_numeric(values).to_numpy(dtype=np.float64, na_value=np.nan)
    except (TypeError, ValueError):
        first = values.dropna().iloc[0] if values.notna().any() else values.iloc[0]
        name = what.removeprefix("column ")
        parse = (
            f"; text dates are parsed first: frame[{name!r}] = pd.to_datetime(frame[{name!r}])"
            if what.startswith("column ") and isinstance(first, str) and DATE_TEXT.match(first)
            else ""
        )
        raise InputError(
            f"values of dtype {values.dtype} such as {shown(first)!r}",
            location=what,
            expected="Unix seconds (numbers, in time_unit) or datetimes" + parse,
        ) from None
    factor = FACTORS[unit]
    bad = implausible(np.where(np.isfinite(raw), raw, 0.0) / factor)
    if bad >= 0:
        raise InputError(
            implausible_message(
                raw[bad],
                unit,
                what="value",
                where=f" at row {bad + 1}",
                hint="time_unit={unit!r}",
            ),
            location=what,
            expected=f"Unix times {RANGE_TEXT} in time_unit (s, ms, us, ns) or datetimes",
        )
    guess = coarser_unit(raw, unit)
    if guess is not None:
        present = raw[np.isfinite(raw)]
        raise InputError(
            coarser_unit_message(
                present.min(), present.max(), unit, guess, what="values", hint="time_unit={unit!r}"
            ),
            location=what,
            expected=f"Unix {NAMES[unit]} as time_unit says, or the column's unit in time_unit "
            "(s, ms, us, ns)",
        )
    if factor == 1:
        return raw
    finite = np.isfinite(raw)
    whole = np.floor(np.where(finite, raw, 0.0)).astype(np.int64) // factor
    return np.where(finite, whole.astype(np.float64), raw)


def _value_text(value: Any) -> str:
    """A column's value as an error names it: ``value 0.5``, or ``a missing value``."""
    return "a missing value" if pd.isna(value) else f"value {shown(value)!r}"


def _times(values: pd.Series, what: str, unit: str = "s") -> np.ndarray:
    seconds = _seconds(values, what, unit)
    bad = np.flatnonzero(~np.isfinite(seconds) | (seconds != np.floor(seconds)))
    if bad.size:
        raise InputError(
            f"{_value_text(values.iloc[bad[0]])} at row {bad[0] + 1}",
            location=what,
            expected="whole Unix seconds or datetimes, none missing",
        )
    return seconds.astype(np.int64)


def _labels(values: pd.Series, positive: Any, what: str) -> np.ndarray:
    """0/1 labels (int8) of ``values``: 0/1 numbers or booleans, or ``positive`` and the rest; a
    missing label (NaN, None, pandas' NA) is an InputError naming its row, never a 0."""
    missing = values.isna().to_numpy()
    if missing.any():
        row = int(np.flatnonzero(missing)[0])
        raise InputError(
            f"a missing value at row {row + 1}",
            location=what,
            expected="a label on every row (drop the rows whose label is not known yet: a "
            "policy's windows, not missing labels, say when a label is known)",
        )
    if positive is not None:
        labels = (values == positive).to_numpy(dtype=np.int8)
        if not labels.any():  # ("1" against the numbers 0 and 1: every label would be a 0)
            seen = ", ".join(repr(shown(v)) for v in pd.unique(values)[:6])
            raise InputError(
                f"positive={positive!r} never occurs (its values: {seen})",
                location=what,
                expected="positive= one of the values, of their type",
            )
        return labels
    if pd.api.types.is_bool_dtype(values.dtype):
        return values.to_numpy(dtype=np.int8)
    ok = values.isin([0, 1]) & values.map(lambda v: isinstance(v, int | float | np.number | bool))
    if not ok.all():
        row = int(np.flatnonzero(~ok.to_numpy())[0])
        raise InputError(
            f"{_value_text(values.iloc[row])} at row {row + 1}",
            location=what,
            expected="labels 0/1 or booleans, or positive= naming the positive class",
        )
    return values.to_numpy(dtype=np.int8)


def _no_effort_option(effort: Any) -> None:
    """A canonical stream has its own effort: ``effort=`` beside one is refused."""
    if effort is not None:
        raise ConfigError(
            f"effort={effort!r} given with a canonical stream",
            location="key effort",
            expected="no effort=: a canonical stream has the effort it was converted with "
            "(delaycv convert --effort)",
        )


def _effort_names(effort: Any) -> list[str] | None:
    """``effort=`` as a list of names (None: not given)."""
    if effort is None:
        return None
    names = [effort] if isinstance(effort, str) else effort
    if (
        not isinstance(names, list | tuple)
        or not names
        or not all(isinstance(n, str) and n for n in names)
        or len(set(names)) < len(names)
    ):
        raise ConfigError(
            f"effort={effort!r}",
            location="key effort",
            expected="a column name or a list of distinct column names (their sum)",
        )
    return list(names)


def _effort_values(columns: dict, where: str) -> np.ndarray:
    """The sum of the effort columns (name -> values), checked: numbers, each and their sum in
    the range of an effort (:func:`delaycv.data.stream.bad_efforts`)."""
    from delaycv.common.checks import EFFORT_EXPECTED
    from delaycv.data.stream import bad_efforts

    total = None
    for name, values in columns.items():
        v = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=np.float64)
        bad = bad_efforts(v)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"effort {where} {name!r} is {shown(list(values)[i])!r} at row {i + 1}",
                location="argument stream",
                expected=f"{EFFORT_EXPECTED} for every instance",
            )
        total = v if total is None else total + v
    bad = bad_efforts(total) if total is not None else None
    if bad is not None and bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"effort {' + '.join(map(repr, columns))} is {float(total[i])!r} at row {i + 1}",
            location="argument stream",
            expected=EFFORT_EXPECTED,
        )
    return total


def _from_frame(frame, time, label, label_time, effort, positive, dataset, unit="s"):
    from delaycv.data.stream import Stream

    time_col = time or "time"
    missing = [c for c in (time_col, label) if c not in frame.columns]
    if label_time is not None and label_time not in frame.columns:
        missing.append(label_time)
    missing += [c for c in effort or () if c not in frame.columns]
    if missing:
        raise InputError(
            f"no column {missing[0]!r}",
            location="argument stream",
            expected="a DataFrame with time and label columns (name them with time=, label=, "
            f"label_time=); its columns: {', '.join(map(str, frame.columns[:12]))}"
            + _index_hint(frame, missing, time_col),
        )
    lt_col = label_time or ("label_time" if "label_time" in frame.columns else None)
    used = [time_col, label, *([lt_col] if lt_col else [])]
    if effort is None and "effort" in frame.columns:
        effort = ["effort"]
        used.append("effort")  # the column named effort is not a feature; named ones stay
    times = _times(frame[time_col], f"column {time_col}", unit)
    lts = _seconds(frame[lt_col], f"column {lt_col}", unit) if lt_col else None
    efforts = _effort_values({c: frame[c].tolist() for c in effort}, "column") if effort else None
    return _make_stream(
        Stream,
        times,
        _labels(frame[label], positive, f"column {label}"),
        lts,
        frame.drop(columns=used).reset_index(drop=True),
        {"dataset": dataset or "dataframe", **_effort_meta(effort)},
        efforts,
    )


def _index_hint(frame: pd.DataFrame, missing: list, time_col: str) -> str:
    """How to give the columns a DataFrame holds in its index ("" when it holds none of them):
    a time series' datetimes are often its index."""
    held = [str(n) for n in frame.index.names if n is not None and n in missing]
    if held:
        return f"; its index holds {', '.join(held)}: frame.reset_index()"
    if missing[0] == time_col and isinstance(frame.index, pd.DatetimeIndex):
        name = frame.index.name
        if name is None:
            return f"; its index holds datetimes: frame.reset_index(names={time_col!r})"
        return f"; its index {name!r} holds datetimes: frame.reset_index() and time={name!r}"
    return ""


def _effort_meta(names: list[str] | None) -> dict:
    return {"effort": " + ".join(names)} if names else {}


@dataclasses.dataclass
class _Pairs:
    """The (x, y) pairs of a river dataset taken apart: the features ``xs`` (without the time,
    reveal-time and own effort keys), the labels ``ys``, the times ``ts`` and reveal times
    ``lts`` (None where x has none) and each effort key's values."""

    xs: list[dict] = dataclasses.field(default_factory=list)
    ys: list[Any] = dataclasses.field(default_factory=list)
    ts: list[Any] = dataclasses.field(default_factory=list)
    lts: list[Any] = dataclasses.field(default_factory=list)
    efforts: dict[str, list[Any]] = dataclasses.field(default_factory=dict)


def _from_pairs(pairs, time, label_time, effort, positive, dataset, unit="s"):
    from delaycv.data.stream import Stream

    time_key = time or "time"
    lt_key = label_time or "label_time"
    own_effort = effort is None  # an "effort" key is the effort, not a feature
    keys = ["effort"] if own_effort else effort
    got = _collect_pairs(pairs, time_key, lt_key, keys, own_effort)
    times, meta = _pair_times(got.ts, time, time_key, unit)
    lt = None
    if any(v is not None for v in got.lts):
        lts = [math.nan if v is None else v for v in got.lts]
        lt = _seconds(pd.Series(lts), f"key {lt_key}", unit)
    labels = _labels(pd.Series(got.ys), positive, "y")
    features = pd.DataFrame.from_records(got.xs)
    if own_effort and all(v is None for v in got.efforts["effort"]):
        keys = []  # no effort key anywhere: no effort
    values = _effort_values({k: got.efforts[k] for k in keys}, "key") if keys else None
    meta = {**meta, **_effort_meta(keys)}
    name = dataset or _pairs_name(pairs)
    return _make_stream(Stream, times, labels, lt, features, {"dataset": name, **meta}, values)


def _pairs_name(pairs) -> str:
    """The dataset name of (x, y) pairs: a river dataset's class name (``Phishing``), else
    ``stream`` (a list, a generator)."""
    from river.datasets.base import Dataset

    return type(pairs).__name__ if isinstance(pairs, Dataset) else "stream"


def _collect_pairs(
    pairs: Iterable, time_key: str, lt_key: str, keys: list[str], own_effort: bool
) -> _Pairs:
    """Take every (x, y) of ``pairs`` apart (:class:`_Pairs`): the ``time_key`` and ``lt_key``
    of x are popped, so are the effort ``keys`` when they are the stream's own effort
    (``own_effort``; else they stay features). An item that is not an (x, y) pair with x a
    dict, or no item at all, is an InputError."""
    got = _Pairs(efforts={k: [] for k in keys})
    for n, item in enumerate(pairs, start=1):
        try:
            x, y = item
        except (TypeError, ValueError):
            raise InputError(
                f"item {n} is not an (x, y) pair: {item!r:.80}",
                location="argument stream",
                expected="(x, y) pairs with x a dict of features",
            ) from None
        if not isinstance(x, dict):
            raise InputError(
                f"x of item {n} is a {type(x).__name__}",
                location="argument stream",
                expected="(x, y) pairs with x a dict of features",
            )
        x = dict(x)
        got.ts.append(x.pop(time_key, None))
        got.lts.append(x.pop(lt_key, None))
        for k in keys:
            got.efforts[k].append(x.pop(k, None) if own_effort else x.get(k))
        got.xs.append(x)
        got.ys.append(y)
    if not got.xs:
        raise InputError("the stream has no instances", location="argument stream")
    return got


def _pair_times(
    ts: list[Any], time: str | None, time_key: str, unit: str
) -> tuple[np.ndarray, dict]:
    """``(times, metadata)`` of the pairs' times ``ts``: with no time in any x (and no ``time``
    key named), the positions 1..n (metadata ``time: position``); else every x must have one."""
    given = [t is not None for t in ts]
    if not any(given):
        if time is not None:
            raise InputError(
                f"no x holds the key {time!r}",
                location="argument time",
                expected="the name of the key of x holding the arrival time",
            )
        return np.arange(1, len(ts) + 1, dtype=np.int64), {"time": "position"}
    if not all(given):
        raise InputError(
            f"x of item {given.index(False) + 1} has no {time_key!r}",
            location="argument stream",
            expected=f"a {time_key!r} key in every x, or in none",
        )
    return _times(pd.Series(ts), f"key {time_key}", unit), {}


def _make_stream(cls, times, labels, label_times, features, metadata, effort=None):
    try:
        return cls(
            time=times,
            label=labels,
            label_time=label_times,
            features=features,
            metadata=metadata,
            effort=effort,
        )
    except InputError:
        raise
    except DelaycvError as err:
        raise InputError(str(err), location="argument stream") from None
