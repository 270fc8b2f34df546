"""The JVM of the process: started once, on the first MOA learner, with the pinned jar.

JPype runs one JVM per process, for the process's life: it cannot be stopped and started again,
nor survive a fork (the engine's worker processes come from a fork server that never starts one,
so each worker starts its own). Its heap is Java's default (a quarter of the machine's memory)
unless asked: the learner key ``heap`` (``{moa: "...", heap: 4g}``) or the environment variable
``DELAYCV_JVM_HEAP`` sets ``-Xmx``. The heap is part of the process's resident memory, so a
run's peak memory and RAM-hours (``run.json``) count it.
"""

from __future__ import annotations

import os
import re

from delaycv.common.errors import ConfigError

#: the environment variable giving the heap (``-Xmx``) of a JVM started without a ``heap`` key
HEAP_ENV = "DELAYCV_JVM_HEAP"
_HEAP = re.compile(r"^[1-9][0-9]*[kKmMgG]?$")
JPYPE_VERSION = "1.7.1"
#: what to install for Java, in the error of a machine without it
JAVA_EXPECTED = (
    "a Java runtime (8 or later): apt-get install openjdk-17-jre-headless, or conda install -c "
    "conda-forge openjdk; or JAVA_HOME set to one"
)

_started_heap: list[str | None] = []  # the heap the JVM of this process started with


def check_heap(heap, where: str = "key heap") -> str | None:
    """``heap`` as Java's ``-Xmx`` takes it (``512m``, ``4g``, a byte count), or None."""
    if heap is None:
        return None
    text = str(heap).strip()
    if not _HEAP.match(text):
        raise ConfigError(
            f"heap {heap!r}", location=where, expected="a size such as 512m or 4g (Java's -Xmx)"
        )
    return text


def jpype():
    """The ``jpype`` module, or a ConfigError saying what to install."""
    try:
        import jpype
    except ImportError:
        raise ConfigError(
            "MOA learners need JPype, which is not installed",
            location="MOA learner",
            expected=f"pip install JPype1=={JPYPE_VERSION} (make venv installs it)",
        ) from None
    return jpype


def start(heap: str | None = None) -> None:
    """Start the JVM with the pinned jar (:func:`delaycv.jvm.jar.locate`) if it is not running;
    a heap other than the running JVM's is an error (one JVM per process)."""
    heap = check_heap(heap) or check_heap(os.environ.get(HEAP_ENV) or None, HEAP_ENV)
    jp = jpype()
    if jp.isJVMStarted():
        if _started_heap and heap is not None and heap != _started_heap[0]:
            raise ConfigError(
                f"heap {heap}: the JVM of this process runs with "
                f"{_started_heap[0] or 'the default heap'}, and a process has one JVM",
                location="key heap",
                expected="the same heap for every MOA learner of a process",
            )
        return
    from delaycv.jvm.jar import locate

    jar = locate()
    from delaycv.jvm import rows

    classpath = [str(jar), *([str(rows.TARGET)] if rows.USABLE else [])]
    try:
        path = jp.getDefaultJVMPath()
    except Exception as err:  # JVMNotFoundException: no JAVA_HOME, no java on the PATH
        raise ConfigError(
            f"MOA learners need Java, and none is found ({err})",
            location="MOA learner",
            expected=JAVA_EXPECTED,
        ) from None
    args = [f"-Xmx{heap}"] if heap else []
    # -Xrs: the JVM leaves Ctrl-C and SIGTERM to Python (the run's own handling: a stopped job
    # says so, leaves nothing partial). -XX:+DisableExplicitGC: JPype asks Java for a full
    # collection whenever Python's memory grows (9 on a 44k-row run, 0.4 s of CPU); delaycv
    # holds no Python handle per instance, so Java's own collections suffice.
    jp.startJVM(
        path, "-Xrs", "-XX:+DisableExplicitGC", *args, classpath=classpath, convertStrings=False
    )
    _started_heap[:] = [heap]
