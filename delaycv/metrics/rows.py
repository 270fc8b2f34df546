"""Per-evaluation sums ("rows") from which every metric is computed, and their lookup table.

Every metric is a function of elementary estimators ``(s, b)`` (MOA's ``Estimator``): a weighted
sum ``s`` of an indicator over the estimator's *own events* and the weight ``b`` of those events.
Each evaluation contributes a vector of such sums (one entry per row below). Estimators of the same
*group* share their own events (the group mask), which matters only for the fading factor: each
group fades only on its own events, as MOA's per-class estimators do.

Groups (w = weight; "active" = known prediction and w > 0, i.e. MOA's ``if (weight > 0)`` block):

=====  =================================  ===================================================
group  own events                         rows (value added per own event)
=====  =================================  ===================================================
A      active                             w; w[p=t]; w[p=0]; w[p=1]; w[t=0]; w[t=1];
                                          w[TP]; w[FP]; w[FN]; w[TN]
P0/P1  active, p = i                      w; w[t=i]; w[maj_i=t]; w[last=t]
T0/T1  active, t = i                      w; w[p=i]; w[last=i]; w[maj_i=i];
                                          w[p!=t] (FPR of the other class j); w[last!=t];
                                          w[maj_j!=t]
Z      known prediction, after the first  (w if w > 0 else 1); w[last=t]; w[maj=t]
       active evaluation
U0/U1  w > 0 and t = i (also abstentions)  w; w[p=-1]
B      w > 0 and finite probability       w; w*brier; w*log_loss; w*information score
=====  =================================  ===================================================

``last`` is the reference label of the previous known evaluation (0 at the start), ``maj_i`` the
majority class read in the middle of MOA's class loop at class i, ``maj`` after it (see
``Metrics``). All rows but group B are ``multiplier * LUT[code]`` where the code packs the discrete
features of the evaluation (``lookup_code``) and the multiplier is ``w`` (or 1 when ``w == 0``).
"""

from __future__ import annotations

import itertools

import numpy as np

ROWS: tuple[str, ...] = (
    # group A
    "a_w", "a_correct", "a_p0", "a_p1", "a_t0", "a_t1", "a_tp", "a_fp", "a_fn", "a_tn",
    # groups P0, P1
    "p0_w", "p0_hit", "p0_maj", "p0_nc",
    "p1_w", "p1_hit", "p1_maj", "p1_nc",
    # groups T0, T1 (recall of class i, FPR of the other class j)
    "t0_w", "t0_hit", "t0_nc", "t0_maj", "t0_fpr", "t0_fpr_nc", "t0_fpr_maj",
    "t1_w", "t1_hit", "t1_nc", "t1_maj", "t1_fpr", "t1_fpr_nc", "t1_fpr_maj",
    # group Z (NoChange and majority references of kappa_t, kappa_m)
    "z_w", "z_nc", "z_maj",
    # groups U0, U1 (abstentions)
    "u0_w", "u0_unk", "u1_w", "u1_unk",
    # group B (probability metrics)
    "b_w", "b_brier", "b_logloss", "b_info",
)  # fmt: skip

R = {name: i for i, name in enumerate(ROWS)}
N_ROWS = len(ROWS)
N_LUT_ROWS = R["b_w"]  # rows before B come from the lookup table

GROUPS: tuple[str, ...] = ("a", "p0", "p1", "t0", "t1", "z", "u0", "u1", "b")
ROW_GROUP = np.array([GROUPS.index(name.split("_")[0]) for name in ROWS], dtype=np.intp)
N_GROUPS = len(GROUPS)

N_CODES = 3 * 2**7


def lookup_code(pred, label, positive, started, last, mid0, mid1, after=None):
    """The row of ``LUT`` (and ``GMASK``) of an evaluation: its discrete features in one integer.

    ``pred`` 1, 0 or -1 (abstained); ``label`` the reference label 0/1; ``positive`` [w > 0];
    ``started`` [at or after the first active evaluation]; ``last`` the NoChange label;
    ``mid0``, ``mid1`` the majority class read for class 0 and for class 1 in MOA's class loop;
    ``after`` the majority class after the loop (``None``: ``mid1``, which MOA reads from the
    same state). Python ints and bools (one evaluation) or numpy arrays (element by element).
    The code is ``(pred + 1) * 128 + label * 64 + positive * 32 + started * 16 + last * 8 +
    mid0 * 4 + mid1 * 2 + after``, in ``range(N_CODES)``.

    >>> lookup_code(-1, 0, False, False, 0, False, False)
    0
    >>> lookup_code(1, 1, True, True, 1, True, True)
    383
    >>> lookup_code(0, 1, True, True, 0, False, True, after=False)
    242
    >>> lookup_code(np.array([1, 0]), np.array([1, 1]), True, True, 0, False, np.array([1, 0]))
    array([371, 240])
    """
    code = (pred + 1) * 128
    code += label * 64
    code += positive * 32 + started * 16
    code += last * 8
    code += mid0 * 4
    if after is None:
        code += mid1 * 3
    else:
        code += mid1 * 2 + after
    return code


def _build_tables() -> tuple[np.ndarray, np.ndarray]:
    lut = np.zeros((N_CODES, N_LUT_ROWS), dtype=np.float64)
    gmask = np.zeros((N_CODES, N_GROUPS - 1), dtype=bool)  # group B is masked separately
    bits = (0, 1)
    for p, t, pos, started, last, mid0, mid1, after in itertools.product(
        (-1, 0, 1), bits, bits, bits, bits, bits, bits, bits
    ):
        code = lookup_code(p, t, pos, started, last, mid0, mid1, after)
        row = lut[code]
        g = gmask[code]
        mid = (mid0, mid1)
        if pos:
            g[GROUPS.index(f"u{t}")] = True
            row[R[f"u{t}_w"]] = 1
            row[R[f"u{t}_unk"]] = p == -1
        if p == -1:
            continue
        if pos:
            g[GROUPS.index("a")] = True
            row[R["a_w"]] = 1
            row[R["a_correct"]] = p == t
            row[R[f"a_p{p}"]] = 1
            row[R[f"a_t{t}"]] = 1
            row[R[{(1, 1): "a_tp", (1, 0): "a_fp", (0, 1): "a_fn", (0, 0): "a_tn"}[p, t]]] = 1
            g[GROUPS.index(f"p{p}")] = True
            row[R[f"p{p}_w"]] = 1
            row[R[f"p{p}_hit"]] = p == t
            row[R[f"p{p}_maj"]] = mid[p] == t
            row[R[f"p{p}_nc"]] = last == t
            j = 1 - t
            g[GROUPS.index(f"t{t}")] = True
            row[R[f"t{t}_w"]] = 1
            row[R[f"t{t}_hit"]] = p == t
            row[R[f"t{t}_nc"]] = last == t
            row[R[f"t{t}_maj"]] = mid[t] == t
            row[R[f"t{t}_fpr"]] = p != t
            row[R[f"t{t}_fpr_nc"]] = last != t
            row[R[f"t{t}_fpr_maj"]] = mid[j] != t
            g[GROUPS.index("z")] = True
            row[R["z_w"]] = 1
            row[R["z_nc"]] = last == t
            row[R["z_maj"]] = after == t
        elif started:
            # MOA at w = 0: only the NoChange and majority references add (value 0, count 1).
            g[GROUPS.index("z")] = True
            row[R["z_w"]] = 1
    return lut, gmask


LUT, GMASK = _build_tables()
GMASK_I = GMASK.astype(np.int64)

# Per code, for the per-evaluation (scalar) path: the rows of every group the evaluation belongs to
# (fading updates all of them, also with 0) and the LUT value of each; group B is added apart.
UPDATES: tuple[tuple[tuple[int, float], ...], ...] = tuple(
    tuple((r, float(LUT[code, r])) for r in range(N_LUT_ROWS) if GMASK[code, ROW_GROUP[r]])
    for code in range(N_CODES)
)
NONZERO: tuple[tuple[tuple[int, float], ...], ...] = tuple(
    tuple((r, v) for r, v in UPDATES[code] if v != 0.0) for code in range(N_CODES)
)
