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
features of the evaluation and the multiplier is ``w`` (or 1 when ``w == 0``).
"""

from __future__ import annotations

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

# code = ((((((pc * 2 + t) * 2 + pos) * 2 + started) * 2 + last) * 2 + mid0) * 2 + mid1) * 2 + after
# with pc = 0 for an abstention, 1 for prediction 0, 2 for prediction 1; pos = [w > 0].
N_CODES = 3 * 2**7


def _build_tables() -> tuple[np.ndarray, np.ndarray]:
    lut = np.zeros((N_CODES, N_LUT_ROWS), dtype=np.float64)
    gmask = np.zeros((N_CODES, N_GROUPS - 1), dtype=bool)  # group B is masked separately
    for code in range(N_CODES):
        rest, after = divmod(code, 2)
        rest, mid1 = divmod(rest, 2)
        rest, mid0 = divmod(rest, 2)
        rest, last = divmod(rest, 2)
        rest, started = divmod(rest, 2)
        rest, pos = divmod(rest, 2)
        pc, t = divmod(rest, 2)
        row = lut[code]
        g = gmask[code]
        mid = (mid0, mid1)
        if pos:
            g[GROUPS.index(f"u{t}")] = True
            row[R[f"u{t}_w"]] = 1
            row[R[f"u{t}_unk"]] = pc == 0
        if pc == 0:
            continue
        p = pc - 1
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
