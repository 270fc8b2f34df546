"""The JVM of the process: started once, on the first MOA learner, with the pinned jar.

JPype runs one JVM per process, for the process's life: it cannot be stopped and started again,
nor survive a fork (the engine's worker processes come from a fork server that never starts one,
so each worker starts its own). Its heap is Java's default (a quarter of the machine's memory)
unless asked: the learner key ``heap`` (``{moa: "...", heap: 4g}``) or the environment variable
``DELAYCV_JVM_HEAP`` sets ``-Xmx``, each checked before the JVM starts
(:func:`delaycv.protocol.moa_spec.check_heap`: a size Java reads, at most the machine's memory).
Within that maximum the heap is sized to the run (:func:`sizing_options`): it starts at
:data:`INITIAL_HEAP` and grows only where the collections would otherwise take a larger share of
the time than :data:`GC_TIME_RATIO` allows.
The heap is part of the process's resident memory, so a run's peak memory and RAM-hours
(``run.json``) count it. A JVM that runs out of it is one line naming the heap and where it came
from (:func:`out_of_memory`).

What Java prints (MOA's stack traces, the warnings of the libraries in MOA's jar) goes nowhere:
a MOA learner's failure is one line with MOA's own messages, made by :mod:`delaycv.jvm.learner`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from delaycv.common.errors import ConfigError
from delaycv.protocol.moa_spec import HEAP_ENV, check_heap, gib, heap_bytes, machine_memory

JPYPE_VERSION = "1.7.1"
#: what to install for Java, in the error of a machine without it
JAVA_EXPECTED = (
    "a Java runtime (8 or later): apt-get install openjdk-17-jre-headless, or conda install -c "
    "conda-forge openjdk; or JAVA_HOME set to one"
)
#: where a heap comes from when the environment variable sets it
HEAP_VARIABLE = f"environment variable {HEAP_ENV}"

#: The heap's size when the JVM starts (Java's default: 1/64 of the machine's memory, 384 MiB on
#: 24 GiB, most of which its collector G1 lets young objects fill between collections), or the
#: maximum heap asked for where that is smaller.
INITIAL_HEAP = "128m"
#: G1 grows the heap where its collections take more than 1 / (1 + ratio) of the time (Java's
#: default 12: 1/13), a share it scales down, to 1 %, while the heap is less than half its maximum
#: (by default a quarter of the machine's memory): with Java's ratio, the heap of a learner that
#: allocates much and keeps little (OzaBag's copies of each instance) grows to 700 MiB around
#: 30 MiB of live objects. With 2 (1/3) it grows where the collections cost, as the model's own
#: size makes them (docs/moa-learners.md, "The peak resident set").
GC_TIME_RATIO = 2
#: Java's options that size the heap or choose the collector: JAVA_TOOL_OPTIONS with one of them
#: are the user's sizing, and the JVM gets no option of :func:`sizing_options`
USER_SIZING = re.compile(r"-Xm[sx]|HeapSize|RAMPercentage|RAMFraction|GCTimeRatio|-XX:\+Use\w+GC")
#: where a user's options for every JVM come from (Java reads them when it starts)
TOOL_OPTIONS = "JAVA_TOOL_OPTIONS"
#: From this Java feature release on, a JVM warns on its standard error (four lines, before any
#: output of delaycv's) when JPype loads its native library, unless the JVM starts with
#: :data:`NATIVE_ACCESS`, an option that older JVMs do not know (Java 8 refuses to start with it).
NATIVE_ACCESS_FROM = 24
NATIVE_ACCESS = "--enable-native-access=ALL-UNNAMED"

#: the JVM of this process once started: (its heap or None for Java's default, where the heap
#: came from: a key, the environment variable, or None)
_started: list[tuple[str | None, str | None]] = []


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


def asked_heap(heap: str | None, where: str) -> tuple[str | None, str | None]:
    """``(heap, where it came from)``: the learner's ``heap`` (at the key ``where``), else the
    environment variable's (checked, naming it), else ``(None, None)``: Java's default."""
    if heap is not None:
        return check_heap(heap, where), where
    from_env = check_heap(os.environ.get(HEAP_ENV) or None, HEAP_VARIABLE)
    return (from_env, HEAP_VARIABLE) if from_env is not None else (None, None)


def start(heap: str | None = None, where: str = "key learner.heap") -> None:
    """Start the JVM with the pinned jar (:func:`delaycv.jvm.jar.locate`) if it is not running,
    with ``heap`` (the learner's key ``where``; None: the environment variable's, else Java's
    default). A heap other than the running JVM's is an error (one JVM per process); None
    accepts the running JVM's."""
    heap, source = asked_heap(heap, where)
    jp = jpype()
    if jp.isJVMStarted():
        running = _started[0][0] if _started else None
        if _started and source == where and heap != running:
            raise ConfigError(
                f"heap {heap}: the JVM of this process runs with {describe_heap()}, and a "
                "process has one JVM",
                location=where,
                expected="the same heap for every MOA learner of a process",
            )
        return
    from delaycv.jvm.build import TARGET, jar_status
    from delaycv.jvm.jar import locate

    jar = locate()
    classpath = [str(jar), *([str(TARGET)] if jar_status()[0] else [])]
    try:
        path = jp.getDefaultJVMPath()
    except Exception as err:  # JVMNotFoundException: no JAVA_HOME, no java on the PATH
        raise ConfigError(
            f"MOA learners need Java, and none is found ({err})",
            location="MOA learner",
            expected=JAVA_EXPECTED,
        ) from None
    args = [f"-Xmx{heap}"] if heap else []
    args += sizing_options(heap, os.environ.get(TOOL_OPTIONS))
    args += native_access_options(java_feature(path))
    # -Xrs: the JVM leaves Ctrl-C and SIGTERM to Python (the run's own handling: a stopped job
    # says so, leaves nothing partial). -XX:+DisableExplicitGC: JPype asks Java for a full
    # collection whenever Python's memory grows (9 on a 44k-row run, 0.4 s of CPU); delaycv
    # holds no Python handle per instance, so Java's own collections suffice.
    try:
        jp.startJVM(
            path,
            "-Xrs",
            "-XX:+DisableExplicitGC",
            *args,
            classpath=classpath,
            convertStrings=False,
        )
    except Exception as err:  # JPype's "Unable to start JVM": its reason is on Java's stderr
        raise ConfigError(
            f"the JVM ({path}) did not start with {_heap_words(heap, source)}: {err}",
            location=source or "MOA learner",
            expected="a heap this machine can give (the learner's key heap or "
            f"{HEAP_ENV}), and a working Java: {JAVA_EXPECTED}",
        ) from None
    _started[:] = [(heap, source)]
    _quiet_java()


def sizing_options(heap: str | None, tool_options: str | None = None) -> list[str]:
    """The options that size the heap to the run: it starts at :data:`INITIAL_HEAP` (``heap``,
    the maximum asked for, if that is smaller) and grows under :data:`GC_TIME_RATIO`. No option where
    ``tool_options`` (``JAVA_TOOL_OPTIONS``) size the heap or choose the collector
    (:data:`USER_SIZING`): Java gives the options it is started with precedence over those, so the
    user's would not apply. Where no maximum is asked and Java's default one is smaller than
    :data:`INITIAL_HEAP` (Java sees less than 512 MiB of memory, too little for a MOA learner's
    run: Python and the JVM alone hold about 300 MiB), Java raises its maximum to the initial heap.

    >>> sizing_options(None), sizing_options("24m")
    (['-Xms128m', '-XX:GCTimeRatio=2'], ['-Xms24m', '-XX:GCTimeRatio=2'])
    >>> sizing_options("4g", "-XX:+UseSerialGC"), sizing_options(None, "-Xss2m")
    ([], ['-Xms128m', '-XX:GCTimeRatio=2'])
    """
    if tool_options and USER_SIZING.search(tool_options):
        return []
    initial = INITIAL_HEAP
    if heap is not None and heap_bytes(heap) < heap_bytes(INITIAL_HEAP):
        initial = heap
    return [f"-Xms{initial}", f"-XX:GCTimeRatio={GC_TIME_RATIO}"]


def java_feature(jvm_path: str) -> int | None:
    """The Java feature release (8, 17, 25) of the JVM whose library is ``jvm_path``, read from
    the ``release`` file of its Java installation (a folder above the library: ``lib/server/``
    in Java 9 and later, ``jre/lib/<arch>/server/`` in Java 8); None where none says it.

    >>> import pathlib, tempfile
    >>> home = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (home / "release").write_text('IMPLEMENTOR="Eclipse Adoptium"\\nJAVA_VERSION="25.0.3"\\n')
    >>> java_feature(str(home / "lib" / "server" / "libjvm.so"))
    25
    >>> _ = (home / "release").write_text('JAVA_VERSION="1.8.0_462"\\n')
    >>> java_feature(str(home / "jre" / "lib" / "amd64" / "server" / "libjvm.so"))
    8
    """
    for folder in list(Path(jvm_path).parents)[:5]:
        try:
            text = (folder / "release").read_text(errors="replace")
        except OSError:
            continue
        found = re.search(r'^JAVA_VERSION="(?:1\.)?(\d+)', text, re.MULTILINE)
        return int(found.group(1)) if found else None
    return None


def native_access_options(feature: int | None) -> list[str]:
    """The option that lets JPype load its native library without Java's warning, for a JVM of
    the Java feature release ``feature`` (:data:`NATIVE_ACCESS_FROM`); none for an older or
    unknown one.

    >>> native_access_options(25), native_access_options(17), native_access_options(None)
    (['--enable-native-access=ALL-UNNAMED'], [], [])
    """
    return [NATIVE_ACCESS] if feature is not None and feature >= NATIVE_ACCESS_FROM else []


def _quiet_java() -> None:
    """Java's standard output and error go nowhere (a MOA learner's failure is one line with
    MOA's messages; MOA prints stack traces and its libraries warnings on them)."""
    from jpype import JClass

    nowhere = JClass("java.io.PrintStream")(JClass("java.io.FileOutputStream")(os.devnull))
    system = JClass("java.lang.System")
    system.setOut(nowhere)
    system.setErr(nowhere)


def _heap_words(heap: str | None, source: str | None) -> str:
    if heap is None:
        return "Java's default heap"
    return f"the heap {heap} ({source})"


def versions() -> dict[str, str]:
    """The versions a MOA learner's numbers depend on (``run.json``'s ``versions``): MOA's pinned
    release, the running JVM's Java and JPype."""
    from jpype import JClass, __version__

    from delaycv.jvm.jar import MOA_VERSION

    java = str(JClass("java.lang.System").getProperty("java.version"))
    return {"moa": MOA_VERSION, "java": java, "jpype": __version__}


def describe_heap() -> str:
    """The running JVM's heap in words: ``the heap 24m (environment variable
    DELAYCV_JVM_HEAP)``, or ``Java's default heap of 5.9 GiB``."""
    heap, source = _started[0] if _started else (None, None)
    if heap is not None:
        return _heap_words(heap, source)
    from jpype import JClass

    most = JClass("java.lang.Runtime").getRuntime().maxMemory()
    return f"Java's default heap of {gib(most)}"


def out_of_memory() -> ConfigError:
    """The one-line error of a JVM that ran out of heap: the heap, where it came from, what to
    do."""
    heap, source = _started[0] if _started else (None, None)
    memory = machine_memory()
    has = f" (this machine has {gib(memory)})" if memory is not None else ""
    return ConfigError(
        f"the MOA learner ran out of memory: Java's OutOfMemoryError with {describe_heap()}",
        location=source or "MOA learner",
        expected=f"a larger heap: the MOA learner's key heap, or the environment variable "
        f"{HEAP_ENV}{has}",
    )


def is_out_of_memory(err: BaseException) -> bool:
    """Whether ``err`` (a Java exception through JPype) is, or was caused by, Java's
    ``OutOfMemoryError``."""
    cause, seen = err, 0
    while cause is not None and seen < 8:
        get_class = getattr(cause, "getClass", None)
        if callable(get_class) and str(get_class().getName()) == "java.lang.OutOfMemoryError":
            return True
        get_cause = getattr(cause, "getCause", None)
        cause = get_cause() if callable(get_cause) else None
        seen += 1
    return False
