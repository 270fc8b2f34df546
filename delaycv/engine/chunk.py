"""What the folds share while the stream is read (pure).

:class:`Slots` holds, for every instance whose label may still be released, what any fold needs to
release it: its true label, its x dict, and for each side it may be predicted on the observed
label, inspection flag and due time once the policy has resolved them. Instance i lives in slot
``i - off`` while ``off <= i <= top``; slots before the oldest waiting instance are forgotten now
and then (:meth:`Slots.compact`), so what is held grows with the labels waiting, not with the
stream.

:class:`ChunkView` is one chunk as the fold loop reads it: the chunk's columns and its releases
(:class:`~delaycv.protocol.releases.ChunkReleases`) as Python lists, built once per chunk for all folds.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

import numpy as np

from delaycv.protocol.releases import ChunkReleases


class Slots:
    """Per-instance state shared by the folds (machine values: no Python object per pending
    label). ``y``: true labels; ``res_o[s]``, ``res_in[s]``, ``res_due[s]``: the observed label,
    inspection flag and due time of side s (0 negative, 1 positive) once resolved; ``x_of``: the
    x dicts (None once no fold can need one); ``effort``: the efforts (empty on a stream without
    one)."""

    __slots__ = ("off", "top", "y", "res_o", "res_in", "res_due", "x_of", "effort")

    def __init__(self) -> None:
        self.off = 1  # the instance in slot 0
        self.top = 0  # the last instance with a slot
        self.y = array("b")
        self.res_o = (array("b"), array("b"))
        self.res_in = (bytearray(), bytearray())
        self.res_due = (array("d"), array("d"))
        self.x_of: list = []
        self.effort = array("d")

    def extend(self, chunk, effort: bool = False) -> None:
        """Slots for the instances of ``chunk`` (a :class:`~delaycv.data.stream.StreamChunk`); with
        ``effort``, their efforts too."""
        k = len(chunk)
        self.top += k
        self.y.frombytes(np.asarray(chunk.label, dtype=np.int8).tobytes())
        for column in (*self.res_o, *self.res_due):
            column.frombytes(bytes(column.itemsize * k))
        for column in self.res_in:
            column.extend(bytes(k))
        self.x_of.extend(chunk.records)
        if effort:
            self.effort.frombytes(np.asarray(chunk.effort, dtype=np.float64).tobytes())

    def record(self, slots: np.ndarray, side: np.ndarray, observed, insp, due) -> None:
        """Store the resolved label (observed, inspection flag, due time) of (slot, side) pairs."""
        for s in (0, 1):
            mine = side == s
            self._store(s, slots[mine], observed[mine], insp[mine], due[mine])

    def record_chunk(self, start: int, releases: ChunkReleases) -> np.ndarray:
        """Store the resolved labels of a chunk's releases (the chunk's own zero-delay releases
        and the candidates); returns the candidates' slots."""
        chunk_slots = np.arange(start + 1 - self.off, start + 1 - self.off + len(releases.own[0]))
        for s in (0, 1):
            mine = releases.own[s]
            self._store(
                s,
                chunk_slots[mine],
                releases.own_o[s][mine],
                releases.own_in[s][mine],
                releases.own_due[s][mine],
            )
        cand = releases.cand
        cand_slots = cand["i"] - self.off
        self.record(cand_slots, cand["s"], cand["o"], cand["insp"], cand["due"])
        return cand_slots

    def _store(self, side: int, at: np.ndarray, observed, insp, due) -> None:
        np.frombuffer(self.res_o[side], dtype=np.int8)[at] = observed
        np.frombuffer(self.res_in[side], dtype=np.uint8)[at] = insp
        np.frombuffer(self.res_due[side], dtype=np.float64)[at] = due

    def forget_x(self, instances: np.ndarray, waiting: np.ndarray) -> None:
        """Drop the x dicts of ``instances`` that no fold needs any more (not in ``waiting``)."""
        for i in instances[~np.isin(instances, waiting)].tolist():
            self.x_of[i - self.off] = None

    def compact(self, drop: int) -> None:
        """Forget the first ``drop`` slots."""
        for column in (self.y, *self.res_o, *self.res_in, *self.res_due):
            del column[:drop]
        if self.effort:
            del self.effort[:drop]
        del self.x_of[:drop]
        self.off += drop


@dataclass(slots=True)
class ChunkView:
    """One chunk of the stream as the fold loop reads it, built once for all folds.

    Instances ``start + 1 .. start + k``: ``times``, ``labels`` and ``records`` (x dicts);
    ``at_once[s][j]``: the observed label (0 or 1) when instance j's label, predicted on side s,
    is released right after its prediction, else -1 (it waits). The candidates (labels of earlier instances
    released at a position of the chunk, in release order): ``cand_at`` (the position; one more
    entry beyond the chunk ends the list), ``cand_slot``, ``cand_side``, ``cand_key`` (the
    evaluation key 2 i + s), ``cand_observed``; ``cand_slots`` the slots as an array.
    ``releases``: the arrays they came from (for inspection errors); ``remaining``: at the last
    chunk with ``flush``, the labels never due (released while the last instance is processed).
    """

    start: int
    k: int
    times: list
    labels: list
    records: list
    at_once: tuple[list, list]
    cand_at: list
    cand_slot: list
    cand_side: list
    cand_key: list
    cand_observed: list
    cand_slots: np.ndarray
    releases: ChunkReleases
    remaining: dict | None = None

    @classmethod
    def build(
        cls, chunk, releases: ChunkReleases, cand_slots: np.ndarray, n: int, remaining=None
    ) -> ChunkView:
        cand = releases.cand
        return cls(
            start=chunk.start,
            k=len(chunk),
            times=chunk.time.tolist(),
            labels=chunk.label.tolist(),
            records=chunk.records if isinstance(chunk.records, list) else list(chunk.records),
            at_once=tuple(at_once(releases, s) for s in (0, 1)),
            cand_at=[*cand["r"].tolist(), n + 2],
            cand_slot=cand_slots.tolist(),
            cand_side=cand["s"].tolist(),
            cand_key=(2 * cand["i"] + cand["s"]).tolist(),
            cand_observed=cand["o"].tolist(),
            cand_slots=cand_slots,
            releases=releases,
            remaining=remaining,
        )


def at_once(releases: ChunkReleases, side: int, observed: np.ndarray | None = None) -> list:
    """Per instance of the chunk predicted on ``side``: the observed label if its label is
    released right after the prediction (``observed``, default the policy's), else -1."""
    if observed is None:
        observed = releases.own_o[side]
    return np.where(releases.own[side], observed, -1).tolist()
