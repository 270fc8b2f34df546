# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The fold loop compiled: :func:`run_rows` runs instances ``lo .. hi - 1`` of a chunk exactly as
the Python loop of :meth:`delaycv.engine.fold.FoldLoop.run_chunk` does (the same learner calls
with the same arguments, in the same order; the same keys, probabilities, counts and
checkpoints), for a fold without an observer. Positions, counts and weights are C integers, the
probabilities a typed view of the fold's array; the learner, the checkpoint and the weighted
trainer are called as Python objects. ``delaycv.engine.compiled`` loads it only when it was
built from this file (``SOURCE_DIGEST``); ``tests/engine/test_compiled_loop.py`` runs both loops on the
engine's guard settings and compares every output.
"""

import sys
from collections import Counter

from cpython cimport array
from cpython.dict cimport PyDict_Next
from cpython.float cimport PyFloat_AS_DOUBLE
from cpython.ref cimport PyObject

cdef extern from *:
    """
    #ifndef DELAYCV_LOOP_SOURCE
    #define DELAYCV_LOOP_SOURCE ""
    #endif
    """
    const char* DELAYCV_LOOP_SOURCE

#: SHA-256 of the ``_loop.pyx`` this module was compiled from (set by the build, ``setup.py``;
#: empty when it was compiled some other way, which ``delaycv.engine.compiled`` treats as stale)
SOURCE_DIGEST = DELAYCV_LOOP_SOURCE.decode("ascii")


from delaycv.protocol.learner_contract import positive_probability as checked_probability

#: ``sum`` adds floats one after the other, from 0.0 (Python 3.11; 3.12 compensates)
cdef bint SEQUENTIAL_SUM = sys.version_info < (3, 12)
#: The keys and integer values of the usual answers, compared by identity (CPython's small ints)
cdef object ZERO = 0
cdef object ONE = 1
cdef object FALSE = False
cdef object TRUE = True
#: What :func:`positive_probability` returns for an answer without a probability (read as 0.5)
cdef double NO_PROBABILITY = -1.0


cdef inline int put_key(array.array keys, long long key) except -1:
    """Append ``key`` to the fold's evaluation buffer (an ``array('q')``)."""
    cdef Py_ssize_t n = len(keys)
    array.resize_smart(keys, n + 1)
    keys.data.as_longlongs[n] = key
    return 0


cdef inline double positive_probability(proba, Py_ssize_t m) except? -2.0:
    """``P1 = p(1) / sum(p)``, or NO_PROBABILITY when the sum is not positive, as the Python loop
    computes it. The usual answer (a dict or Counter keyed by the ints 0 and 1 or by False and
    True, with float values, or the ints 0 and 1, in [0, 1]) is checked and summed in C from 0.0
    in the dict's order (what ``sum`` does on Python 3.11: ``0 + v`` is ``0.0 + v``, and ints 0
    and 1 add exactly); anything else goes to :func:`delaycv.protocol.learner_contract.positive_probability`,
    which gives the same value or raises (naming instance ``m``)."""
    cdef Py_ssize_t pos = 0
    cdef PyObject* key
    cdef PyObject* value
    cdef double total = 0.0
    cdef double p1 = 0.0
    cdef double v
    if type(proba) is dict or type(proba) is Counter:
        while PyDict_Next(proba, &pos, &key, &value):
            if type(<object>value) is float:
                v = PyFloat_AS_DOUBLE(<object>value)
                if not (v >= 0.0 and v <= 1.0):  # NaN too
                    break
            elif value == <PyObject*>ZERO:
                v = 0.0
            elif value == <PyObject*>ONE:
                v = 1.0
            else:
                break
            if key == <PyObject*>ONE or key == <PyObject*>TRUE:
                p1 = v
            elif key != <PyObject*>ZERO and key != <PyObject*>FALSE:
                break
            total = total + v
        else:
            if not SEQUENTIAL_SUM:
                total = sum(proba.values())
            if total > 0:
                return p1 / total
            return NO_PROBABILITY
    p = checked_probability(proba, m)
    if p is None:
        return NO_PROBABILITY
    return p


def run_rows(fold, view, slots, Py_ssize_t lo, Py_ssize_t hi, state):
    """Instances ``lo .. hi - 1`` (positions in the chunk ``view``) of ``fold`` (a
    :class:`~delaycv.engine.fold.FoldLoop` without an observer); ``state`` (a
    :class:`~delaycv.engine.fold.RowState`) carries the chunk's labels and the loop's counters
    from one call to the next."""
    cdef Py_ssize_t start = view.start
    cdef Py_ssize_t j0 = start - slots.off  # the slot of instance start + 1, minus 1
    cdef list records = view.records
    cdef list at_once_n = state.at_once_n
    cdef list at_once_p = state.at_once_p
    cdef list cand_observed = state.cand_observed
    cdef list cand_at = view.cand_at
    cdef list cand_slot = view.cand_slot
    cdef list cand_side = view.cand_side
    cdef list cand_key = view.cand_key
    cdef list side_of = fold.side
    cdef list x_of = slots.x_of
    cdef double[::1] p1_of = fold.p1
    cdef const long long[::1] w_of = fold.w
    cdef array.array keys = fold.ev_key
    cdef double threshold = fold.threshold
    cdef bint trained_only = fold.trained_only
    predict = fold.learner.predict_proba_one
    learn = fold.learner.learn_one
    train_weighted = fold.train_weighted
    cdef Py_ssize_t c = state.c
    cdef Py_ssize_t evaluated = state.evaluated
    cdef Py_ssize_t skipped = state.skipped
    cdef Py_ssize_t checkpoint = state.checkpoint
    cdef Py_ssize_t no_probability = state.no_probability
    cdef Py_ssize_t due = cand_at[c]
    cdef Py_ssize_t i, j, slot, evaluated_before
    cdef Py_ssize_t m = start + 1 + lo  # the instance being processed (named if the learner fails)
    cdef long long w, w_slot
    cdef int pred, observed, label, predicted_side, candidate_side
    cdef double p1
    try:
        for i in range(lo, hi):
            m = start + 1 + i
            j = j0 + 1 + i
            x = records[i]
            w = w_of[j]
            evaluated_before = evaluated
            # 1. release the candidates due at m that wait on the side this fold predicted
            while due == m:
                slot = cand_slot[c]
                predicted_side = side_of[slot]
                candidate_side = cand_side[c]
                if predicted_side == candidate_side:
                    put_key(keys, cand_key[c])
                    evaluated += 1
                    w_slot = w_of[slot]
                    label = cand_observed[c]
                    if w_slot == 1:
                        learn(x_of[slot], label)
                    elif w_slot > 0:
                        train_weighted(x_of[slot], label, w_slot)
                c += 1
                due = cand_at[c]
            # 2. predict m
            p1 = positive_probability(predict(x), m)
            if p1 == NO_PROBABILITY:
                p1 = 0.5
                no_probability += 1
            p1_of[j] = p1
            if p1 > threshold:
                pred = 1
                observed = at_once_p[i]
            else:
                pred = 0
                observed = at_once_n[i]
            # 3. the policy's outcome: released now (scored, trained), or pending on its side
            if trained_only and w == 0:
                skipped += 1
            elif observed >= 0:
                put_key(keys, 2 * m + pred)
                evaluated += 1
                if w == 1:
                    learn(x, observed)
                elif w > 0:
                    train_weighted(x, observed, w)
            else:
                side_of[j] = pred
            # 4. checkpoint
            if m == checkpoint:
                evaluated = fold.checkpoint(
                    view, slots, m, view.times[i], evaluated, evaluated_before, skipped, state.c0
                )
                checkpoint = fold.checkpoints[fold.next_checkpoint]
    except Exception as err:
        from delaycv.engine.fold import note_instance  # (fold imports this module)

        note_instance(err, m)
        raise
    state.c = c
    state.evaluated = evaluated
    state.skipped = skipped
    state.checkpoint = checkpoint
    state.no_probability = no_probability
