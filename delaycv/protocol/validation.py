"""Validation schemes and per-fold random streams (design card §5).

Training weight of instance n (1-based) in fold i (0-based) of k folds:

=============== ==============================================
``prequential`` 1 (every fold; with k > 1 folds differ only by their learner seed)
``cv``          0 if n mod k == i, else 1 (k >= 2)
``split``       1 if n mod k == i, else 0
``bootstrap``   a Poisson(1) draw, the n-th of fold i's own stream
=============== ==============================================

A run's ``seed`` is its replicate: every random part of the experiment is redrawn from it, the
bootstrap weights included (so two seeds of a deterministic learner are two replicates), unless
``fixed_split`` asks for the same weights for every seed. The cv, split and prequential weights use
no random draw: with them seeds differ through the learner seeds (and noise) only, and two seeds of a
deterministic learner are duplicates.

Every random stream is a :class:`numpy.random.Generator` (PCG64) seeded from a
:class:`numpy.random.SeedSequence` whose entropy is a tuple of integers, so that a fold's draws do
not depend on which other folds run (needed for parallel folds and ``folds_subset``):

- bootstrap weights of fold i: entropy ``(validation_seed, seed, i, BOOTSTRAP)``, or
  ``(validation_seed, i)`` with ``fixed_split`` (the same for every seed). The purpose code keeps the
  stream apart from the others: SeedSequence pads entropy with zeros, so without it the weights of
  fold 1 with both seeds 1 (the defaults) would be fold 1's noise stream ``(1, 1, NOISE)``;
- prediction noise / inspection errors of fold i: ``(seed, i, NOISE)`` / ``(seed, i, INSPECTION)``;
- learner seed of fold i: ``SeedSequence((seed, i)).generate_state(1)[0]`` (a uint32), or ``seed``
  itself for every fold with ``same_learner_seed``.

``evaluate="all"`` (default): every fold evaluates every instance and trains with its weight (0 =
not trained). ``evaluate="trained"``: a fold predicts every instance but queues and evaluates only
those with weight > 0 (the MOA extension's behaviour); the others are counted as *skipped*.

The module is pure: it opens no file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from delaycv.common import choices
from delaycv.common import defaults as _defaults
from delaycv.common.bounds import check_size
from delaycv.common.checks import check_flag, check_seed, is_integer
from delaycv.common.errors import ConfigError

SCHEMES = choices.SCHEMES
EVALUATE = ("all", "trained")
#: Purpose codes of the per-fold random streams (last entropy word).
NOISE = 1
INSPECTION = 2
BOOTSTRAP = 3
#: Keys of a validation spec (workflow config ``validation:``).
SPEC_KEYS = ("scheme", "folds", "seed", "evaluate", "fixed_split")


def generator(*entropy: int) -> np.random.Generator:
    """The PCG64 Generator seeded from ``SeedSequence(entropy)``."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy)))


def fold_rng(seed: int, fold: int, *purpose: int) -> np.random.Generator:
    """The Generator seeded from entropy ``(seed, fold, *purpose)``."""
    return generator(seed, fold, *purpose)


def learner_seed(seed: int, fold: int, same: bool = False) -> int:
    """The learner seed of ``fold``: derived from ``(seed, fold)``, or ``seed`` when ``same``."""
    if same:
        return int(seed)
    return int(np.random.SeedSequence((seed, fold)).generate_state(1)[0])


def uniforms(seed: int, fold: int, purpose: int, n: int) -> np.ndarray:
    """``n`` uniform [0, 1) draws of fold ``fold``'s stream ``purpose`` (row i = instance i + 1)."""
    return fold_rng(seed, fold, purpose).random(n)


@dataclass(frozen=True)
class Validation:
    """A validation scheme: ``scheme``, number of ``folds`` k, ``seed`` (bootstrap draws, with the
    run seed), ``evaluate`` (``"all"`` or ``"trained"``) and ``fixed_split`` (bootstrap weights from
    ``seed`` alone: the same for every run seed); defaults from :mod:`delaycv.common.defaults`."""

    scheme: str = _defaults.SCHEME
    folds: int | None = None  # None: 1 for prequential, else defaults.FOLDS
    seed: int = _defaults.VALIDATION_SEED
    evaluate: str = _defaults.EVALUATE
    fixed_split: bool = _defaults.FIXED_SPLIT

    def __post_init__(self) -> None:
        if self.folds is None and self.scheme in SCHEMES:
            object.__setattr__(self, "folds", _defaults.folds_for(self.scheme))
        if self.scheme not in SCHEMES:
            raise ConfigError(
                f"unknown validation scheme {self.scheme!r}",
                location="key validation.scheme",
                expected=", ".join(SCHEMES),
            )
        if not is_integer(self.folds) or self.folds < 1:
            raise ConfigError(
                f"folds {self.folds!r} is not a positive integer",
                location="key validation.folds",
                expected="k >= 1",
            )
        check_size("folds", self.folds, "key validation.folds")
        if self.scheme == "cv" and self.folds < 2:
            raise ConfigError(
                "cross-validation with one fold never trains",
                location="key validation.folds",
                expected="k >= 2 for cv",
            )
        check_seed(self.seed, "validation.seed")
        if self.evaluate not in EVALUATE:
            raise ConfigError(
                f"unknown evaluate option {self.evaluate!r}",
                location="key validation.evaluate",
                expected=", ".join(EVALUATE),
            )
        check_flag(self.fixed_split, "validation.fixed_split")

    @property
    def trained_only(self) -> bool:
        return self.evaluate == "trained"

    def weights(self, fold: int, n: int, seed: int) -> np.ndarray:
        """Training weights (int64) of instances 1..n in ``fold`` (row i = instance i + 1) in the
        run of seed ``seed`` (the replicate; only bootstrap without ``fixed_split`` uses it)."""
        return self.weight_draws(fold, seed)(0, n)

    def weight_draws(self, fold: int, seed: int) -> Callable[[int, int], np.ndarray]:
        """``draw(start, stop)``: the weights of instances start+1 .. stop, for consecutive
        ranges from 0 on (one random stream per fold, drawn in order: chunk by chunk gives the
        same weights as :meth:`weights` at once)."""
        if not 0 <= fold < self.folds:
            raise ConfigError(
                f"fold {fold} does not exist", location="key folds", expected=f"0..{self.folds - 1}"
            )
        seed = check_seed(seed, "seed")
        k = self.folds
        if self.scheme == "prequential":
            return lambda start, stop: np.ones(stop - start, dtype=np.int64)
        if self.scheme == "bootstrap":
            rng = (
                generator(self.seed, fold)
                if self.fixed_split
                else generator(self.seed, seed, fold, BOOTSTRAP)
            )
            return lambda start, stop: rng.poisson(1.0, stop - start).astype(np.int64)
        cv = self.scheme == "cv"  # cv trains on the other folds' instances, split on its own

        def draw(start: int, stop: int) -> np.ndarray:
            hit = (np.arange(start + 1, stop + 1, dtype=np.int64) % k) == fold
            return (hit != cv).astype(np.int64)

        return draw


def make_validation(spec: dict | Validation | None) -> Validation:
    """A :class:`Validation` from a plain dict (``scheme``, ``folds``, ``seed``, ``evaluate``,
    ``fixed_split``); missing keys take the defaults of :mod:`delaycv.common.defaults` (bootstrap, 10
    folds, seed 1, all, no fixed split; 1 fold for prequential)."""
    if isinstance(spec, Validation):
        return spec
    spec = dict(spec or {})
    unknown = sorted(set(spec) - set(SPEC_KEYS))
    if unknown:
        raise ConfigError(
            f"unknown validation key(s) {', '.join(unknown)}",
            location=f"key validation.{unknown[0]}",
            expected=", ".join(SPEC_KEYS),
        )
    return Validation(**spec)
