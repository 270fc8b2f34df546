"""When each label is released, resolved chunk by chunk as the stream is read (pure).

A label policy (:mod:`delaycv.protocol.policies`) gives every instance i, for each side s it may be
predicted on (0 negative, 1 positive), an observed label and a due key ``(a, q)``; the engine
releases the label before predicting the first instance r >= i with ``(a, q) <= (t_r, r)``.
:meth:`Policy.schedule <delaycv.protocol.policies.Policy.schedule>` computes the keys for a whole stream
at once; here the same keys are resolved while the stream is read, so that what is held grows
with the labels still waiting, not with the stream:

- an *entry* (i, s) has a **time key** ``(a, 0)``, released at the first r >= i with
  ``t_r >= a`` (a time window's expiry, or the feedback event ``max(L_i, t_i)``; ``a = +inf``:
  none), and, for count windows of c instances, a **position key**: released at r = i + c (the
  expiry key ``(t_{i+c}, i + c)``; none past the end of the stream). Whichever comes first
  releases it, the time key on a tie; each has its observed label and whether it comes from a
  ``truth`` expiry (subject to inspection errors). For a count window the feedback wins iff
  ``L_i <= t_{i+c}``, as in :meth:`~delaycv.protocol.policies.Policy.schedule`;
- :meth:`Releases.resolve` takes the next chunk of the stream and returns the releases that fall
  inside it: those right after the instance's own prediction (zero delay) and the others in
  release order ``(r, a, q, i, s)`` -- the engine's order ``(a, q, arrival index)`` within a
  position; entries not yet due wait in the pool. Entries that can never be released are
  dropped at once unless they are flushed at the end (:meth:`Releases.remaining`).

The module opens no file.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: No position key (time-window entries; count windows past the end of the stream).
NEVER = np.iinfo(np.int64).max
#: Columns of an entry: instance (1-based), side, time key, its label and inspection flag,
#: position key, its label and inspection flag.
FIELDS = ("i", "s", "a", "a_o", "a_in", "p", "p_o", "p_in")
DTYPES = dict(i=np.int64, s=np.int8, a=np.float64, a_o=np.int8, a_in=bool, p=np.int64)
DTYPES.update(p_o=np.int8, p_in=bool)


@dataclass(frozen=True)
class ChunkReleases:
    """The releases that fall in one chunk (instances start+1 .. start+k).

    ``own[s]`` (bool, k): the label of the chunk's instance j, predicted on side s, is released
    right after its own prediction, with observed label ``own_o[s][j]`` (``own_in[s][j]``: from a
    truth expiry) and due time ``own_due[s][j]``. ``cand``: the other releases at positions of the
    chunk, in release order: arrays ``r`` (position), ``i``, ``s``, ``o``, ``insp``, ``due``.
    """

    own: tuple[np.ndarray, np.ndarray]
    own_o: tuple[np.ndarray, np.ndarray]
    own_in: tuple[np.ndarray, np.ndarray]
    own_due: tuple[np.ndarray, np.ndarray]
    cand: dict[str, np.ndarray]


def _empty() -> dict[str, np.ndarray]:
    return {f: np.zeros(0, dtype=DTYPES[f]) for f in FIELDS}


class Releases:
    """The pending entries of a stream of ``n`` instances under ``policy`` (shared by the folds:
    they depend on the stream and the policy only). ``flush``: keep the entries never due, for
    :meth:`remaining`."""

    def __init__(self, policy, n: int, flush: bool) -> None:
        self.sides = (
            (policy.neg_window, policy.neg_expiry),
            (policy.pos_window, policy.pos_expiry),
        )
        self.feedback = bool(policy.feedback)
        self.n = int(n)
        self.flush = bool(flush)
        self.pool = _empty()

    def __len__(self) -> int:
        return int(self.pool["i"].shape[0])

    def oldest(self) -> int | None:
        """The smallest instance number with an entry still waiting (None: nothing waits)."""
        return int(self.pool["i"].min()) if len(self) else None

    def entries(self, start: int, time, label, label_time) -> dict[str, np.ndarray]:
        """The entries of instances start+1 .. start+k (both sides), from their columns."""
        k = len(time)
        i = np.arange(start + 1, start + k + 1, dtype=np.int64)
        tf = np.asarray(time, dtype=np.int64).astype(np.float64)
        lt = np.asarray(label_time, dtype=np.float64)
        known = ~np.isnan(lt)
        label = np.asarray(label, dtype=np.int8)
        parts = []
        for s, (window, expiry) in enumerate(self.sides):
            truth = expiry == "truth"
            e_o = label.copy() if truth else np.zeros(k, dtype=np.int8)
            e_in = np.full(k, truth)
            fb_at = np.maximum(np.where(known, lt, -np.inf), tf)
            if window.is_count:
                end = i + int(window.amount)
                p = np.where(end <= self.n, end, NEVER)
                fb = known if self.feedback else np.zeros(k, dtype=bool)
                a = np.where(fb, fb_at, np.inf)
                a_o, a_in = np.ones(k, dtype=np.int8), np.zeros(k, dtype=bool)
                p_o, p_in = e_o, e_in
            else:
                expiry_at = tf + float(window.amount)
                fb = known & (lt <= expiry_at) if self.feedback else np.zeros(k, dtype=bool)
                a = np.where(fb, fb_at, expiry_at)
                a_o = np.where(fb, 1, e_o).astype(np.int8)
                a_in = ~fb & truth
                p = np.full(k, NEVER, dtype=np.int64)
                p_o, p_in = np.zeros(k, dtype=np.int8), np.zeros(k, dtype=bool)
            side = np.full(k, s, dtype=np.int8)
            parts.append(dict(i=i, s=side, a=a, a_o=a_o, a_in=a_in, p=p, p_o=p_o, p_in=p_in))
        return {f: np.concatenate([part[f] for part in parts]).astype(DTYPES[f]) for f in FIELDS}

    def resolve(self, start: int, time, label, label_time) -> ChunkReleases:
        """Add the entries of instances start+1 .. start+k (``time`` etc.: their columns) and
        return the releases at positions start+1 .. start+k; the rest keeps waiting."""
        k = len(time)
        stop = start + k
        new = self.entries(start, time, label, label_time)
        e = {f: np.concatenate((self.pool[f], new[f])) for f in FIELDS}
        tf = np.asarray(time, dtype=np.int64).astype(np.float64)
        at = np.searchsorted(tf, e["a"], "left")  # the chunk's first instance with t >= a
        r_a = np.where(at < k, np.maximum(start + 1 + at, e["i"]), NEVER)
        r_p = np.where((e["p"] > start) & (e["p"] <= stop), e["p"], NEVER)
        by_time = r_a <= r_p
        r = np.minimum(r_a, r_p)
        done = r <= stop
        o = np.where(by_time, e["a_o"], e["p_o"]).astype(np.int8)
        insp = np.where(by_time, e["a_in"], e["p_in"])
        p_at = np.clip(e["p"] - start - 1, 0, max(k - 1, 0))
        due = np.where(by_time, e["a"], tf[p_at] if k else 0.0)
        q = np.where(by_time, 0, e["p"])
        own_mask = done & (r == e["i"])
        own, own_o, own_in, own_due = [], [], [], []
        for s in (0, 1):
            pick = np.flatnonzero(own_mask & (e["s"] == s))
            j = e["i"][pick] - start - 1
            flag = np.zeros(k, dtype=bool)
            flag[j] = True
            ob = np.zeros(k, dtype=np.int8)
            ob[j] = o[pick]
            ins = np.zeros(k, dtype=bool)
            ins[j] = insp[pick]
            du = np.full(k, np.nan)
            du[j] = due[pick]
            own.append(flag)
            own_o.append(ob)
            own_in.append(ins)
            own_due.append(du)
        later = np.flatnonzero(done & (r > e["i"]))
        order = later[np.lexsort((e["s"][later], e["i"][later], q[later], due[later], r[later]))]
        cand = dict(r=r[order], i=e["i"][order], s=e["s"][order], o=o[order])
        cand.update(insp=insp[order], due=due[order])
        wait = ~done
        if not self.flush:
            wait &= (e["a"] < np.inf) | (e["p"] != NEVER)
        self.pool = {f: e[f][wait] for f in FIELDS}
        return ChunkReleases(tuple(own), tuple(own_o), tuple(own_in), tuple(own_due), cand)

    def remaining(self) -> dict[str, np.ndarray]:
        """The entries still waiting after the last chunk, in due order ``(a, q = 0, i, s)``:
        arrays ``i``, ``s``, ``o``, ``insp``, ``due`` (released by their time key, else by their
        expiry: a count window past the end, due at +inf)."""
        e = self.pool
        by_time = e["a"] < np.inf
        order = np.lexsort((e["s"], e["i"], e["a"]))
        o = np.where(by_time, e["a_o"], e["p_o"]).astype(np.int8)
        insp = np.where(by_time, e["a_in"], e["p_in"])
        return dict(
            i=e["i"][order], s=e["s"][order], o=o[order], insp=insp[order], due=e["a"][order]
        )
