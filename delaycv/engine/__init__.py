"""The delayed-label prequential k-fold evaluation loop (docs/engine.md) -- pure.

Per fold f (folds are independent and run one after another, or in parallel processes), for each
stream instance m = 1..n at time t_m, in file order:

1. release every pending label whose due key ``(a, q)`` satisfies ``(a, q) <= (t_m, m)``, in
   ``(a, q, arrival index)`` order; for each released instance i: score *its own* stored
   prediction against the observed label o_i and against the true label y_i, then train the
   fold's learner on ``(x_i, o_i)`` with the fold's training weight w_i (see
   :func:`delaycv.protocol.learner_contract.trainer`);
2. predict instance m: ``P1 = p(1) / sum(p)`` from ``predict_proba_one`` (0.5 for an empty dict or
   a zero sum); the prediction is ``1 iff P1 > threshold`` (strict);
3. compute ``(o, a, q)`` with the policy (:mod:`delaycv.protocol.policies`) for the learner's prediction; if
   ``(a, q) <= (t_m, m)`` release it at once (zero delay: test-then-train), else queue it.

With ``evaluate="trained"`` an instance of weight 0 is predicted but neither queued nor evaluated
(counted as *skipped*). At the end, labels not yet due stay pending; with ``flush=True`` they are
released in due order while the last instance is processed. Per fold, at every checkpoint::

    seen == predicted == evaluated + pending + skipped

The prediction used for scoring is flipped with probability ``prediction_noise`` (the MOA
extension's ``-n``; one uniform per instance from the fold's NOISE stream); the learner and the
policy use the un-flipped prediction. Observed labels from a ``truth`` expiry are flipped with
probability ``policy.inspection_error`` (one uniform per instance from the fold's INSPECTION
stream).

Checkpoints: every ``every`` stream instances and the last one (the same positions for every
learner), plus optional positions, fractions of the stream or times. The package opens no file.

The engine is a package, one idea per module:

- :mod:`~delaycv.engine.run`: :func:`evaluate`, the one entry point (a stream and a
  :class:`~delaycv.protocol.settings.RunSettings`), and :class:`EvaluationResult`;
- :mod:`~delaycv.engine.folds`: the folds chunk by chunk as the stream is read;
- :mod:`~delaycv.engine.fold`: one fold's loop (release, predict, policy, checkpoint);
- :mod:`~delaycv.engine.chunk`: what the folds share (the slots of instances whose labels may
  still be released, and one chunk's view);
- :mod:`~delaycv.engine.checkpoints`, :mod:`~delaycv.engine.tables` (the fold table and its
  summary), :mod:`~delaycv.engine.progress`, :mod:`~delaycv.engine.parallel` (folds in
  processes);
- :mod:`~delaycv.engine.learners`: a fold's learner from its spec, river's or MOA's.

Imports: :mod:`delaycv.common`, :mod:`delaycv.data` (the stream), :mod:`delaycv.metrics`,
:mod:`delaycv.protocol` (the settings, learners and releases), :mod:`delaycv.jvm` (a MOA learner,
in :mod:`~delaycv.engine.learners` only when one is asked for).
"""

from __future__ import annotations

from delaycv.engine.checkpoints import checkpoint_positions
from delaycv.engine.fold import FLUSH_EVERY
from delaycv.engine.folds import CHUNK
from delaycv.engine.parallel import PRELOAD
from delaycv.engine.progress import PROGRESS_BLOCK, Progress
from delaycv.engine.run import EvaluationResult, evaluate, probe_learner
from delaycv.engine.tables import (
    FOLD_COLUMNS,
    INT_COLUMNS,
    PREDICTION_COLUMNS,
    RUN_KEYS,
    SUMMARY_COUNTS,
    SUMMARY_KEYS,
    SUMMARY_STATS,
    folds_table,
    summarize,
)

__all__ = [
    "CHUNK",
    "FLUSH_EVERY",
    "FOLD_COLUMNS",
    "INT_COLUMNS",
    "PREDICTION_COLUMNS",
    "PRELOAD",
    "PROGRESS_BLOCK",
    "RUN_KEYS",
    "SUMMARY_COUNTS",
    "SUMMARY_KEYS",
    "SUMMARY_STATS",
    "EvaluationResult",
    "Progress",
    "checkpoint_positions",
    "evaluate",
    "folds_table",
    "probe_learner",
    "summarize",
]
