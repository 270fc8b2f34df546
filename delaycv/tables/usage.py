"""What a run costs the machine: CPU seconds, peak resident memory and RAM-hours (docs/engine.md, "Resource use").

:class:`Meter` watches the process that runs an evaluation (``delaycv evaluate``, the workflow's
evaluate job) from a daemon thread and, when stopped, gives the four values ``run.json`` records
(:data:`KEYS`)::

    meter = Meter()            # as early as the command or the job can
    ...                        # the run, its tables written
    extra = meter.stop()       # {"process_wall_seconds": ..., "process_cpu_seconds": ...,
                               #  "peak_rss_bytes": ..., "ram_hours": ...}

Definitions (docs/engine.md, "Resource use"):

- ``process_wall_seconds``: the process's age when the meter stops (from its start, as the kernel
  records it, not from the meter's).
- ``process_cpu_seconds``: the CPU time, user + system, of the process from its start and of its
  descendant processes (the ``--jobs`` workers, the fork server): ``getrusage`` of the process
  and of the children it waited for, plus, for a descendant still running when the meter stops,
  its own and its waited-for children's time from /proc/<pid>/stat (the fork server's, which
  holds its ended workers').
- ``ram_hours``: the resident memory of the process **and of all its descendant processes** (the
  ``--jobs`` workers and multiprocessing's fork server), in GiB (2**30 bytes), integrated over the
  process's wall time, in hours: GiB x h. The resident set sizes (``/proc/<pid>/statm``: pages
  resident, file-backed and shared ones included) of the process tree are summed at every sample
  (every :data:`INTERVAL` s, and when the meter starts and stops; the trapezoid rule between
  samples); the span between the process's start and the meter's first sample counts at that
  sample's size. A page shared by several processes (a forked worker's copy-on-write pages) counts
  once per process, so with workers the sum can exceed the memory they really occupy.
- ``peak_rss_bytes``: the largest of the sampled sums, or the process's own high-water mark
  (``VmHWM`` of /proc/self/status: exact, since the process started) when that is larger (a peak
  of the process alone between two samples). Without workers it is that high-water mark. (Not
  ``getrusage``'s ``ru_maxrss``: on Linux a process inherits its parent's at its start, and a job
  would report the memory of the Snakemake that started it.)

Linux only for the samples (``/proc``); elsewhere ``ram_hours`` is None and ``peak_rss_bytes`` is
the process's own high-water mark from ``getrusage``. Standard library only, and in no stage's
code digest (:mod:`delaycv.study.digests`): how the cost is measured changes no result, so a change here
reruns no evaluation.
"""

from __future__ import annotations

import os
import resource
import sys
import threading
import time
from pathlib import Path

#: Seconds between two samples of the process tree's resident memory (a sample reads one small
#: /proc file per process and per thread: ~0.1 ms, so 0.05 % of a core).
INTERVAL = 0.2
#: Bytes in a GiB (the unit of RAM-hours, as MOA's 1024^3).
GIB = 1024**3
#: The keys :meth:`Meter.stop` returns, in the order run.json and the runs table list them.
KEYS = ("process_wall_seconds", "process_cpu_seconds", "peak_rss_bytes", "ram_hours")

_PROC = Path("/proc")


def _page_size() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 4096


_PAGE = _page_size()


def rss_bytes(pid: int) -> int | None:
    """The resident set size of process ``pid`` in bytes, or None (no /proc, or it is gone)."""
    try:
        with open(_PROC / str(pid) / "statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return None


class _NoChildrenFiles(Exception):
    """The kernel has no /proc/<pid>/task/<tid>/children (CONFIG_PROC_CHILDREN)."""


def _children(pid: int) -> list[int]:
    """The child processes of ``pid`` (those of every one of its threads); raises
    :class:`_NoChildrenFiles` when the kernel has no ``children`` files."""
    found: list[int] = []
    try:
        tasks = os.listdir(_PROC / str(pid) / "task")
    except OSError:
        return found  # the process is gone
    for tid in tasks:
        task = _PROC / str(pid) / "task" / tid
        try:
            with open(task / "children", "rb") as f:
                found.extend(int(c) for c in f.read().split())
        except FileNotFoundError:
            if task.exists():
                raise _NoChildrenFiles from None
            # (the thread ended since the listing)
        except (OSError, ValueError):
            continue
    return found


def _parents() -> dict[int, list[int]]:
    """Every process's children, from every process's parent (/proc/<pid>/stat)."""
    by_parent: dict[int, list[int]] = {}
    for name in os.listdir(_PROC):
        if not name.isdigit():
            continue
        try:
            with open(_PROC / name / "stat", "rb") as f:
                stat = f.read()
            parent = int(stat[stat.rindex(b")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        by_parent.setdefault(parent, []).append(int(name))
    return by_parent


def descendants(pid: int) -> list[int]:
    """Every process descending from ``pid`` (children, their children, ...)."""
    found: list[int] = []
    seen = {pid}
    todo = [pid]
    by_parent = None
    while todo:
        current = todo.pop()
        if by_parent is None:
            try:
                children = _children(current)
            except _NoChildrenFiles:
                by_parent = _parents()
                children = by_parent.get(current, [])
        else:
            children = by_parent.get(current, [])
        for child in children:
            if child not in seen:
                seen.add(child)
                found.append(child)
                todo.append(child)
    return found


def tree_rss_bytes(pid: int) -> int | None:
    """The resident set sizes of ``pid`` and of its descendants, summed (None without /proc)."""
    own = rss_bytes(pid)
    if own is None:
        return None
    return own + sum(rss_bytes(child) or 0 for child in descendants(pid))


def own_peak_bytes() -> int:
    """The process's high-water mark of resident memory since it started: ``VmHWM`` of
    /proc/self/status, else ``getrusage``'s ``ru_maxrss`` (KiB on Linux, bytes on macOS).

    Not ``ru_maxrss`` on Linux: a process started by another (``subprocess``: fork or vfork, then
    exec) inherits the larger of its own and its parent's high-water mark there, so a small job
    started by a large Snakemake would report Snakemake's memory; ``VmHWM`` is of the process's
    own memory since its exec."""
    try:
        for line in (_PROC / "self" / "status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024  # kB
    except (OSError, ValueError, IndexError):
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) if sys.platform == "darwin" else int(peak) * 1024


def _stat_cpu_seconds(pid: int) -> float:
    """CPU time of a live process ``pid`` and of its children that it waited for (user + system:
    utime, stime, cutime, cstime of /proc/<pid>/stat), 0.0 if it is gone."""
    try:
        stat = (_PROC / str(pid) / "stat").read_bytes()
        fields = stat[stat.rindex(b")") + 2 :].split()
        return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def tree_cpu_seconds(pid: int | None = None) -> float:
    """CPU time (user + system) of this process since it started, and of its descendants: those
    it waited for (``getrusage(RUSAGE_CHILDREN)``, with what they waited for), and those still
    running, with what they waited for (/proc/<pid>/stat: the fork server's ended workers are
    in its own children's time). Without /proc, the process and the children it waited for."""
    pid = os.getpid() if pid is None else pid
    own = resource.getrusage(resource.RUSAGE_SELF)
    waited = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds = own.ru_utime + own.ru_stime + waited.ru_utime + waited.ru_stime
    if _PROC.joinpath(str(pid)).is_dir():
        seconds += sum(_stat_cpu_seconds(child) for child in descendants(pid))
    return seconds


def process_age() -> float | None:
    """Seconds since this process started (its start time in /proc/self/stat against the
    system's uptime), or None without /proc."""
    try:
        stat = (_PROC / "self" / "stat").read_bytes()
        started = int(stat[stat.rindex(b")") + 2 :].split()[19]) / os.sysconf("SC_CLK_TCK")
        uptime = float((_PROC / "uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return max(uptime - started, 0.0)


class Meter:
    """Samples the resident memory of this process and its descendants every ``interval``
    seconds in a daemon thread until :meth:`stop`, which returns the run's cost (:data:`KEYS`,
    definitions in the module's docstring). Also a context manager (``with Meter() as m:``; then
    ``m.result``)."""

    def __init__(self, interval: float = INTERVAL) -> None:
        if not interval > 0:
            raise ValueError(f"interval {interval!r} (expected a number of seconds > 0)")
        self.interval = float(interval)
        self.pid = os.getpid()
        self.result: dict | None = None
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        now = time.monotonic()
        age = process_age()
        self._start = now - (age if age is not None else 0.0)  # the process's start
        rss = tree_rss_bytes(self.pid)
        self._sampling = rss is not None
        self._last_time = now
        self._last_rss = rss or 0
        # the span from the process's start to this first sample, at this sample's size
        self._byte_seconds = float(self._last_rss) * (now - self._start)
        self._peak = self._last_rss
        self._samples = 1 if self._sampling else 0
        self._thread = None
        if self._sampling:
            self._thread = threading.Thread(target=self._run, name="delaycv-usage", daemon=True)
            self._thread.start()

    def _sample(self) -> None:
        rss = tree_rss_bytes(self.pid)
        now = time.monotonic()
        if rss is None:
            return
        with self._lock:
            self._byte_seconds += (self._last_rss + rss) / 2 * (now - self._last_time)
            self._last_time, self._last_rss = now, rss
            self._peak = max(self._peak, rss)
            self._samples += 1

    def _run(self) -> None:
        while not self._stopped.wait(self.interval):
            self._sample()

    @property
    def samples(self) -> int:
        """How many samples the meter took so far."""
        return self._samples

    def stop(self) -> dict:
        """Stop sampling (a last sample now) and return the cost; later calls return the same."""
        if self.result is not None:
            return self.result
        self._stopped.set()
        if self._thread is not None:
            self._thread.join()
        if self._sampling:
            self._sample()
        end = time.monotonic()
        self.result = {
            "process_wall_seconds": end - self._start,
            "process_cpu_seconds": tree_cpu_seconds(self.pid),
            "peak_rss_bytes": max(self._peak, own_peak_bytes()),
            "ram_hours": self._byte_seconds / GIB / 3600 if self._sampling else None,
        }
        return self.result

    def __enter__(self) -> Meter:
        return self

    def __exit__(self, *exc) -> bool:
        self.stop()
        return False
