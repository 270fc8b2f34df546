"""What the engine asks of a learner (pure): how it is trained and how its answer is read.

A learner is any object with ``learn_one(x, y[, w])`` and ``predict_proba_one(x)`` (river's
classifiers, :class:`delaycv.jvm.learner.MoaClassifier`, a user's own class). :func:`trainer`
trains it with an instance's weight (:func:`accepts_weight`: whether it takes one);
:func:`positive_probability` reads its answer, the one rule of both fold loops (the compiled
loop's fast path gives the same value bit for bit) and of the engine's probe.

What a learner's ``predict_proba_one`` must return (:func:`positive_probability`, the engine's
reading of it): a dict of probabilities in [0, 1] keyed by the labels the engine trains with, 0
and 1 (``False`` and ``True``, the keys of river's binary linear models, are equal to them and
accepted; so is ``numpy.int64(1)``); an empty dict (or zeros) while it has no probability, read
as 0.5. Anything else (``None``, NaN, a value outside [0, 1], a key such as ``"yes"`` or ``2``)
cannot be scored: :class:`UnusableProbability`. A run warns when more than
:data:`NO_PROBABILITY_WARN` of its predictions came without a probability.

A learner's own loop
--------------------

A learner may run the fold loop's steps itself (``run_rows``: the Java loop of MOA learners,
:mod:`delaycv.jvm.rows`), as the compiled loop runs them:
``run_rows(fold, view, slots, lo, hi, state)`` runs rows ``lo .. hi - 1`` of a chunk for the fold
the engine passes in. Besides the fold's arrays and settings (``learner``, ``threshold``,
``trained_only``, ``side``, ``w``, ``p1``, ``ev_key``, ``checkpoints``, ``next_checkpoint``), it
calls the fold's hooks: ``fold.checkpoint(...)`` at each checkpoint it reaches, and
``fold.note_instance(err, m)`` on an exception raised while instance m was processed (the engine
then names the learner, the fold and the instance); it imports nothing of the engine.

Folds may run ``run_rows`` in threads of one process, each fold in one thread at a time
(:func:`delaycv.engine.folds.run_folds`): a loop changes nothing but its fold, and reads the chunk.
A learner whose loop shares something of the chunk between folds makes it in
``prepare_rows(view, slots)``, which the engine calls once per chunk before the threads start.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

#: The share of a run's predictions without a probability (each read as P(1) = 0.5: the metrics
#: measure no model there) above which the run warns (``run.json``'s ``no_probability_share``).
NO_PROBABILITY_WARN = 0.1
#: What ``predict_proba_one`` must return (the expected part of the engine's error).
PROBABILITY_EXPECTED = (
    "a dict keyed by the labels 0 and 1, or False and True, with probabilities in [0, 1]; an "
    "empty dict while the learner has none"
)


def accepts_weight(learner: Any) -> bool:
    """True when ``learner.learn_one`` has an explicit ``w`` parameter."""
    try:
        params = inspect.signature(learner.learn_one).parameters
    except (TypeError, ValueError):
        return False
    return "w" in params


def trainer(learner: Any) -> Callable[[dict, int, float], None]:
    """``train(x, y, w)``: w == 1 -> ``learn_one(x, y)``; w > 1 -> ``learn_one(x, y, w=w)`` if the
    learner accepts a weight, else ``learn_one`` w times (w rounded to an integer); w <= 0 -> no call.
    """
    learn = learner.learn_one
    weighted = accepts_weight(learner)

    def train(x: dict, y: int, w: float) -> None:
        if w == 1:
            learn(x, y)
        elif w > 0:
            if weighted:
                learn(x, y, w=w)
            else:
                for _ in range(round(w)):
                    learn(x, y)

    return train


# --------------------------------------------------------------------------- probabilities


class UnusableProbability(ValueError):
    """A ``predict_proba_one`` answer the engine cannot score (:func:`positive_probability`):
    ``reason`` says what it returned (``"returned None"``), ``instance`` is the stream position
    of the prediction when known (the engine names the learner and the fold)."""

    def __init__(self, reason: str, proba: Any, instance: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.proba = proba
        self.instance = instance


def _shown(value: Any, width: int = 80) -> str:
    """``repr(value)`` on one line, cut to about ``width`` characters."""
    text = " ".join(repr(value).split())
    return text if len(text) <= width else text[: width - 3] + "..."


def positive_probability(proba: Any, instance: int | None = None) -> float | None:
    """P(1) of a ``predict_proba_one`` answer, checked: ``p(1) / sum(p)`` (a float), or None when
    it gives no probability (an empty dict, or values that are all 0: the engine reads P(1) = 0.5).

    The answer must be a mapping whose keys equal the labels 0 or 1 and whose values are numbers
    in [0, 1] (module docstring); anything else raises :class:`UnusableProbability` (with
    ``instance``, the stream position, for the error the engine makes of it). The fold loops
    compute the same value on a fast path and call this for everything else, so that both give
    the same numbers, bit for bit.

    >>> positive_probability({0: 0.25, 1: 0.75}), positive_probability({False: 0.9, True: 0.1})
    (0.75, 0.1)
    >>> positive_probability({}) is None
    True
    >>> positive_probability({"no": 0.2, "yes": 0.8})
    Traceback (most recent call last):
    ...
    delaycv.protocol.learner_contract.UnusableProbability: returned the key 'no' ({'no': 0.2, 'yes': 0.8}): the engine's labels are 0 and 1
    """
    if not isinstance(proba, Mapping):
        kind = "" if proba is None else f"a {type(proba).__name__}: "
        raise UnusableProbability(f"returned {kind}{_shown(proba)}", proba, instance)
    for key, value in proba.items():
        try:
            label = bool(key == 0 or key == 1)
        except Exception:  # a key whose comparison fails (an array): not a label
            label = False
        if not label:
            raise UnusableProbability(
                f"returned the key {_shown(key, 40)} ({_shown(proba)}): the engine's labels are "
                "0 and 1",
                proba,
                instance,
            )
        try:
            number = bool(0 <= value <= 1)  # NaN is not
        except Exception:  # None, a string, an array
            number = False
        if not number:
            raise UnusableProbability(
                f"returned {_shown(value, 40)} for the label {key!r} ({_shown(proba)})",
                proba,
                instance,
            )
    try:
        total = sum(proba.values())
        return float(proba.get(1, 0.0) / total) if total > 0 else None
    except Exception as err:  # numbers of kinds that do not add up (Decimal and float)
        raise UnusableProbability(
            f"returned values that cannot be added ({_shown(proba)}: {type(err).__name__}: {err})",
            proba,
            instance,
        ) from None
