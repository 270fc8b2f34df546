"""The embedded default stream: a seeded, commit-like synthetic stream with delayed fix events.

:func:`generate_stream` draws, from ``numpy.random.default_rng(seed)`` only (same arguments =>
same stream => byte-identical Parquet):

Arrival times (Unix seconds, from 2018-01-01 UTC). Day d gets N_d ~ Poisson(mu * w_d) commits,
w_d = 1 on weekdays and ``weekend_factor`` (0.15) on Saturdays and Sundays. A day's commits come
in B_d = 1 + Poisson(1.5) bursts centred uniformly in 08:00-20:00; each commit is its burst centre
plus an Exponential(20 min) offset. mu is set so that the stream spans about ``days`` days.

Features (13, numeric, float64), per commit, in the Kamei et al. change-metric style:
``la``, ``ld`` (lines added/deleted, log-normal), ``nf``, ``ns``, ``nd`` (files, subsystems,
directories: 1 + Poisson), ``entropy`` (spread of the change over its files, in [0, log2 nf]),
``lt`` (lines in the touched files before the change), ``ndev``, ``age`` (days since the last
change of the files), ``nuc``, ``exp`` (author experience, grows with the author's commit count),
``rexp`` (recent experience), ``fix`` (0/1, the commit is a fix, Bernoulli(0.25)).

Label. With z the standardised log-features, the probability that a commit induces a defect is
``p_i = sigmoid(b_c + w_c . z_i)`` for concept c. Concept 0 (before the drift) is driven by size
(``la``, ``nf``) and inexperience (``-exp``); concept 1 (after it) by ``entropy``, ``fix`` and
young files (``-age``). Around the drift point (``drift_at`` of the stream) the concept is mixed
over ``drift_width`` instances: weight of concept 1 = sigmoid((i - i_drift) / (drift_width / 8)).
Each intercept b_c is solved (bisection) so that the mean of p over the instances of its own
concept (before / after the drift point) is ``positive_rate`` (0.30).
y_i ~ Bernoulli(p_i).

Fix events. A positive commit is found by a later fix with probability ``reveal_rate`` (0.8;
the others never are). The delay is heavy-tailed: log-normal with median ``delay_median_days``
(10 d) and sigma ``delay_sigma`` (1.6). The fix is a later commit: ``label_time`` is the arrival
time of the first commit at or after t_i + delay (or t_i + delay itself when that is after the
last commit). Negatives and never-found positives have ``label_time`` NaN.

Effort. Each commit's effort is its changed lines, ``la + ld`` (``metadata["effort"]`` is
``"la + ld"``), as the conversion presets give real data; computed from the features, it draws
nothing (``effort=False``: a stream without effort, otherwise the same).
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import numpy as np
import pandas as pd

from delaycv.common.checks import is_integer
from delaycv.common.errors import DelaycvError
from delaycv.common.portable import dot, exp, log1p, log2
from delaycv.data.convert import stream_metadata
from delaycv.data.stream import Stream

#: the generator's name in a stream's metadata (``generator`` and ``source``): its identity in
#: the data, kept as first written when the module moved (a new name would change every stream)
GENERATOR_NAME = "delaycv.synthetic"

GENERATOR_VERSION = 1
START = 1514764800  # 2018-01-01T00:00:00Z (a Monday)
DAY = 86400
FEATURES = (
    "la",
    "ld",
    "nf",
    "ns",
    "nd",
    "entropy",
    "lt",
    "ndev",
    "age",
    "nuc",
    "exp",
    "rexp",
    "fix",
)
# weights on standardised log-features, concept 0 and concept 1 (order of FEATURES)
_W0 = np.array([0.9, 0.2, 0.6, 0.2, 0.1, 0.1, 0.2, 0.1, -0.1, 0.1, -0.7, -0.2, 0.1])
_W1 = np.array([0.2, 0.1, 0.1, 0.1, 0.1, 0.9, 0.0, 0.2, -0.7, 0.1, -0.1, 0.0, 0.8])
#: the effort of the synthetic stream (its metadata["effort"]): the changed lines
EFFORT = "la + ld"


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # exp(-x) overflows to inf for x < -709, and 1 / (1 + inf) is the right limit, 0
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + exp(-x))


def _intercept(score: np.ndarray, rate: float) -> float:
    """b with mean(sigmoid(b + score)) == rate (bisection, 60 steps)."""
    lo, hi = -30.0, 30.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if _sigmoid(mid + score).mean() < rate:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _arrivals(rng: np.random.Generator, rows: int, days: float, weekend: float) -> np.ndarray:
    weekdays_share = (5 + 2 * weekend) / 7
    mu = rows / (days * weekdays_share)
    out: list[np.ndarray] = []
    total = 0
    day = 0
    while total < rows:
        block = np.arange(day, day + 64)
        weight = np.where(block % 7 >= 5, weekend, 1.0)  # START is a Monday
        counts = rng.poisson(mu * weight)
        for d, k in zip(block, counts, strict=True):
            if k == 0:
                continue
            bursts = 1 + rng.poisson(1.5)
            centres = rng.uniform(8 * 3600, 20 * 3600, size=bursts)
            which = rng.integers(0, bursts, size=k)
            secs = centres[which] + rng.exponential(1200.0, size=k)
            out.append(START + d * DAY + np.minimum(secs, DAY - 1).astype(np.int64))
            total += k
        day += 64
    return np.sort(np.concatenate(out), kind="stable")[:rows]


def _features(rng: np.random.Generator, n: int) -> pd.DataFrame:
    nf = 1 + rng.poisson(2.0, n) * (rng.random(n) < 0.6)
    la = np.round(rng.lognormal(3.0, 1.5, n) * np.sqrt(nf))
    ld = np.round(rng.lognormal(2.0, 1.6, n) * (rng.random(n) < 0.8))
    ns = np.minimum(nf, 1 + rng.poisson(0.4, n))
    nd = np.minimum(nf, ns + rng.poisson(0.8, n))
    entropy = np.where(nf > 1, rng.beta(2.0, 1.5, n) * log2(np.maximum(nf, 2)), 0.0)
    lt = np.round(rng.lognormal(5.0, 1.4, n))
    ndev = 1 + rng.poisson(3.0, n)
    age = rng.exponential(40.0, n)
    nuc = np.minimum(nf, 1 + rng.poisson(1.0, n))
    authors = rng.zipf(1.6, n) % 40
    exp = np.zeros(n)
    seen: dict[int, int] = {}
    for i, a in enumerate(authors.tolist()):
        seen[a] = seen.get(a, 0) + 1
        exp[i] = seen[a] - 1
    rexp = exp / (1.0 + rng.exponential(5.0, n))
    fix = (rng.random(n) < 0.25).astype(np.float64)
    cols = [la, ld, nf, ns, nd, entropy, lt, ndev, age, nuc, exp, rexp, fix]
    data = {name: np.asarray(c, dtype=np.float64) for name, c in zip(FEATURES, cols, strict=True)}
    frame = pd.DataFrame(data)
    frame["entropy"] = frame["entropy"].round(6)
    frame["age"] = frame["age"].round(6)
    frame["rexp"] = frame["rexp"].round(6)
    return frame


def generate_stream(
    rows: int = 6000,
    seed: int = 1,
    *,
    dataset: str = "synthetic",
    positive_rate: float = 0.30,
    reveal_rate: float = 0.8,
    delay_median_days: float = 10.0,
    delay_sigma: float = 1.6,
    drift_at: float = 0.5,
    drift_width: int = 200,
    days: float | None = None,
    weekend_factor: float = 0.15,
    effort: bool = True,
) -> Stream:
    """The seeded default stream (see the module docstring for every formula).

    ``days`` defaults to rows / 6 (about 1,000 days for 6,000 rows). The metadata has the same
    keys as a converted stream; ``source_sha256`` is the SHA-256 of the generator's parameters
    (JSON), ``generator`` the parameters themselves. ``effort``: the stream's effort is la + ld
    (True, default) or it has none (False); the rest of the stream is the same either way.
    """
    _check_arguments(rows, seed, positive_rate, reveal_rate, effort, drift_at)
    rows, seed = int(rows), int(seed)
    days = rows / 6.0 if days is None else float(days)
    params = _parameters(
        rows,
        seed,
        positive_rate=positive_rate,
        reveal_rate=reveal_rate,
        delay_median_days=delay_median_days,
        delay_sigma=delay_sigma,
        drift_at=drift_at,
        drift_width=drift_width,
        days=days,
        weekend_factor=weekend_factor,
    )
    # one generator, drawn from in this order: arrivals, features, labels, reveals
    rng = np.random.default_rng(seed)
    time = _arrivals(rng, rows, days, weekend_factor)
    features = _features(rng, rows)
    label = _drifting_labels(rng, features, positive_rate, drift_at, drift_width)
    revealed, label_time = _reveal_times(
        rng, time, label, reveal_rate, delay_median_days, delay_sigma
    )
    metadata = _metadata(dataset, params, links=int(revealed.sum()), effort=effort)
    return Stream(
        time=time,
        label=label,
        label_time=label_time,
        features=features,
        metadata=metadata,
        effort=(features["la"] + features["ld"]).to_numpy() if effort else None,
    )


def _parameters(rows: int, seed: int, **values: float) -> dict[str, Any]:
    """The generator's parameters as recorded in the metadata (``generator``), in this order."""
    return {
        "generator": GENERATOR_NAME,
        "version": GENERATOR_VERSION,
        "rows": rows,
        "seed": seed,
        **{
            key: values[key]
            for key in (
                "positive_rate",
                "reveal_rate",
                "delay_median_days",
                "delay_sigma",
                "drift_at",
                "drift_width",
                "days",
                "weekend_factor",
            )
        },
    }


def _metadata(dataset: str, params: dict[str, Any], links: int, effort: bool) -> dict:
    """The metadata of a generated stream: the keys of a converted one, ``source_sha256`` the
    SHA-256 of the parameters (JSON), ``links`` the revealed positives."""
    text = json.dumps(params, sort_keys=True, separators=(",", ":"))
    return stream_metadata(
        dataset=dataset,
        source=GENERATOR_NAME,
        source_sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        format="synthetic",
        preset=None,
        positive_class="1",
        negative_class="0",
        time_column="time",
        label_column="label",
        feedback_column=None,
        link_kind="synthetic",
        links=links,
        generator=params,
        effort=EFFORT if effort else None,
    )


def _check_arguments(
    rows: Any, seed: Any, positive_rate: float, reveal_rate: float, effort: Any, drift_at: float
) -> None:
    """The arguments of :func:`generate_stream` that have a range; DelaycvError otherwise."""
    if not is_integer(rows) or rows < 1:
        raise DelaycvError(f"rows must be a positive integer, got {rows!r}")
    if not is_integer(seed) or seed < 0:
        raise DelaycvError(f"seed must be a non-negative integer, got {seed!r}")
    for name, value in (("positive_rate", positive_rate), ("reveal_rate", reveal_rate)):
        if not 0.0 < value < 1.0 and not (name == "reveal_rate" and value in (0.0, 1.0)):
            raise DelaycvError(f"{name} must be in (0, 1), got {value!r}")
    if not isinstance(effort, bool):
        raise DelaycvError(f"effort must be true or false, got {effort!r}")
    if not 0.0 <= drift_at <= 1.0:
        raise DelaycvError(f"drift_at must be in [0, 1], got {drift_at!r}")


def _drifting_labels(
    rng: np.random.Generator,
    features: pd.DataFrame,
    positive_rate: float,
    drift_at: float,
    drift_width: int,
) -> np.ndarray:
    """The 0/1 labels: drawn from a logistic model of the standardised log features whose
    weights change from ``_W0`` to ``_W1`` around row ``drift_at * rows`` (over about
    ``drift_width`` rows), each intercept set for ``positive_rate`` on its side."""
    rows = len(features)
    z = log1p(features.to_numpy())
    sd = z.std(axis=0)
    z = (z - z.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    s0, s1 = dot(z, _W0), dot(z, _W1)
    cut = min(max(int(round(drift_at * rows)), 1), rows - 1) if rows > 1 else 1
    p0 = _sigmoid(_intercept(s0[:cut], positive_rate) + s0)
    p1 = _sigmoid(_intercept(s1[cut:] if cut < rows else s1, positive_rate) + s1)
    mix = _sigmoid((np.arange(rows) - drift_at * rows) / max(drift_width / 8.0, 1e-9))
    prob = (1 - mix) * p0 + mix * p1
    return (rng.random(rows) < prob).astype(np.int8)


def _reveal_times(
    rng: np.random.Generator,
    time: np.ndarray,
    label: np.ndarray,
    reveal_rate: float,
    delay_median_days: float,
    delay_sigma: float,
) -> tuple[np.ndarray, np.ndarray]:
    """``(revealed, label_time)``: which positives are revealed (a share ``reveal_rate``) and
    when: at the first arrival at or after a log-normal delay (NaN: never revealed)."""
    rows = len(time)
    revealed = (label == 1) & (rng.random(rows) < reveal_rate)
    delay = rng.lognormal(math.log(delay_median_days * DAY), delay_sigma, rows)
    due = time + np.ceil(delay)
    nxt = np.searchsorted(time, due, "left")
    fix_time = np.where(nxt < rows, time[np.minimum(nxt, rows - 1)], due).astype(np.float64)
    label_time = np.where(revealed, fix_time, np.nan)
    return revealed, label_time
