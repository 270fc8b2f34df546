"""Build the Java fold loop for MOA learners (``java/delaycv/jvm/FoldRows.java``) into
``delaycv/jvm/fold_rows.jar``, with the SHA-256 of its source inside; ``make venv`` runs it.

The build is optional, like the compiled Cython loop's: it needs ``javac`` (a JDK: Debian's
``openjdk-17-jdk-headless``, conda-forge's ``openjdk``) and the pinned MOA jar; without them
MOA learners run through the Python loop, with the same results (:mod:`delaycv.jvm.rows` says
which runs, and refuses a jar built from another source). Command line::

    python -m delaycv.jvm.build            # build if possible, say what runs
    python -m delaycv.jvm.build --require  # fail (exit 2) when it cannot be built
"""

from __future__ import annotations

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
    with tempfile.TemporaryDirectory() as tmp:
        classes = Path(tmp) / "classes"
        cmd = [javac, "--release", "8", "-nowarn", "-cp", str(moa_jar), "-d", str(classes)]
        done = subprocess.run([*cmd, str(SOURCE)], capture_output=True, text=True, check=False)
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
            jar.writestr(DIGEST_MEMBER, source_digest(SOURCE) + "\n")
        shutil.move(str(part), target)
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
    from delaycv.jvm import rows

    print(f"delaycv: MOA learners run {rows.status()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
