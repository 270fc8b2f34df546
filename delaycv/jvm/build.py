"""Build the Java fold loop for MOA learners (``java/delaycv/jvm/FoldRows.java``) into
``delaycv/jvm/fold_rows.jar``, with the SHA-256 of its source inside twice: as a member of the jar
(:data:`DIGEST_MEMBER`, read before the JVM starts) and compiled into the class
(``FoldRows.SOURCE_SHA256``, from a class ``FoldRowsBuild`` the build writes beside the source),
which :mod:`delaycv.jvm.rows` reads from the class the JVM loaded; ``make venv`` runs it.

The build is optional, like the compiled Cython loop's: it needs ``javac`` (a JDK: Debian's
``openjdk-17-jdk-headless``, conda-forge's ``openjdk``) and the pinned MOA jar; without them
MOA learners run through the Python loop, with the same results (:mod:`delaycv.jvm.rows` says
which runs, and refuses a jar built from another source). Command line::

    python -m delaycv.jvm.build            # build if possible, say what runs
    python -m delaycv.jvm.build --require  # fail (exit 2) when it cannot be built
"""

from __future__ import annotations

import functools
import logging
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from delaycv.common.errors import ConfigError

HERE = Path(__file__).parent
SOURCE = HERE / "java" / "delaycv" / "jvm" / "FoldRows.java"
TARGET = HERE / "fold_rows.jar"
#: the member of the built jar holding the source's SHA-256
DIGEST_MEMBER = "delaycv/jvm/FoldRows.sha256"
#: the class files the built jar holds (the loop, its records, the class of the source's digest)
CLASSES = (
    "delaycv/jvm/FoldRows.class",
    "delaycv/jvm/FoldRows$Chunk.class",
    "delaycv/jvm/FoldRows$Fold.class",
    "delaycv/jvm/FoldRowsBuild.class",
)

#: how to rebuild, in every warning about the jar
REBUILD = "MOA learners run the Python loop (rebuild: python -m delaycv.jvm.build)"
#: the warnings about the jar, one line each (``delaycv evaluate`` and ``check`` show them as
#: ``delaycv: warning: ...``)
log = logging.getLogger("delaycv.jvm")


@functools.cache
def jar_status() -> tuple[bool, str]:
    """Whether the built jar may go on the JVM's class path, and which loop MOA learners run
    (read once, without a JVM): not under ``DELAYCV_PURE_PYTHON=1``, nor without a jar; a jar
    built from another source, or without the classes the build makes, is a one-line warning
    (:data:`log`). :func:`delaycv.jvm.rows.usable` checks the class the JVM loads."""
    from delaycv.common import native

    if native.pure_python():
        return False, f"the Python loop: {native.PURE_PYTHON}=1"
    if not TARGET.is_file():
        return (
            False,
            "the Python loop: the Java fold loop is not built (python -m delaycv.jvm.build)",
        )
    try:
        with zipfile.ZipFile(TARGET) as jar:
            built = jar.read(DIGEST_MEMBER).decode().strip()
            missing = sorted(set(CLASSES) - set(jar.namelist()))
    except (OSError, KeyError, UnicodeDecodeError, zipfile.BadZipFile):
        built, missing = "", []
    why = None
    if built != native.source_digest(SOURCE):
        why = "was built from another FoldRows.java than the one beside it"
    elif missing:
        why = f"holds no {', '.join(missing)}, which the build makes"
    if why is not None:
        log.warning("%s %s: %s", TARGET.name, why, REBUILD)
        return False, f"the Python loop: {TARGET.name} {why}"
    return True, f"the Java fold loop ({TARGET.name})"


def build(target: Path = TARGET) -> Path:
    """Compile :data:`SOURCE` against the pinned MOA jar into ``target`` (atomically)."""
    from delaycv.common.native import source_digest
    from delaycv.jvm.jar import locate

    javac = shutil.which("javac")
    if javac is None:
        raise ConfigError(
            "no javac on the PATH",
            location="the Java fold loop",
            expected="a JDK (apt-get install openjdk-17-jdk-headless, conda install openjdk)",
        )
    moa_jar = locate()
    digest = source_digest(SOURCE)
    with tempfile.TemporaryDirectory() as tmp:
        classes = Path(tmp) / "classes"
        made = Path(tmp) / "FoldRowsBuild.java"
        made.write_text(
            "package delaycv.jvm;\n\n/** Written by delaycv.jvm.build: the SHA-256 of "
            "FoldRows.java. */\nfinal class FoldRowsBuild {\n    private FoldRowsBuild() {}\n\n"
            f'    static final String SOURCE_SHA256 = "{digest}";\n}}\n'
        )
        cmd = [javac, "--release", "8", "-nowarn", "-cp", str(moa_jar), "-d", str(classes)]
        done = subprocess.run(
            [*cmd, str(SOURCE), str(made)], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise ConfigError(
                f"javac failed: {done.stderr.strip()}",
                location=str(SOURCE),
                expected="Java source that compiles",
            )
        part = Path(tmp) / "fold_rows.jar"
        with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as jar:
            for path in sorted(classes.rglob("*.class")):
                jar.write(path, path.relative_to(classes).as_posix())
            jar.writestr(DIGEST_MEMBER, digest + "\n")
        shutil.move(str(part), target)
    jar_status.cache_clear()
    return target


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args not in ([], ["--require"]):
        print("usage: python -m delaycv.jvm.build [--require]", file=sys.stderr)
        return 2
    try:
        build()
    except ConfigError as err:
        if args:
            print(f"delaycv: error: {err}", file=sys.stderr)
            return 2
        print(f"delaycv: the Java fold loop is not built ({err}): MOA learners run the Python loop")
        return 0
    print(f"delaycv: MOA learners run {jar_status()[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
