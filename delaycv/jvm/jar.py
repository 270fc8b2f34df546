"""The pinned MOA jar: where delaycv finds it, how it is checked, how it is installed.

delaycv runs one MOA release, MOA 2024.07 as the PyPI wheel of capymoa 0.15.1 carries it
(``capymoa/jar/moa.jar``; capymoa's own Python package is not installed: it pins another pandas).
Its SHA-256 is pinned: a jar of another release would give other numbers under the same spec, so
it is refused, never used.

Where the jar is looked for, first match:

1. the environment variable ``DELAYCV_MOA_JAR`` (a path to the jar);
2. ``<cache>/delaycv/moa-2024.07/moa.jar``, where ``<cache>`` is ``$XDG_CACHE_HOME`` or
   ``~/.cache``: what ``python -m delaycv.jvm.jar install`` writes (``make venv`` runs it).

Checking a 66 MB jar's SHA-256 takes a tenth of a second; a stamp beside an installed jar
(``moa.jar.sha256``: digest, size and modification time) lets a JVM start skip it while the file
is unchanged.

Command line::

    python -m delaycv.jvm.jar install   # download the wheel (pip, no dependencies), check, unpack
    python -m delaycv.jvm.jar path      # the jar in use, checked
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from delaycv.common.cache import cache_dir
from delaycv.common.errors import ConfigError

MOA_VERSION = "2024.07"
CAPYMOA_VERSION = "0.15.1"
WHEEL = f"capymoa-{CAPYMOA_VERSION}-py3-none-any.whl"
WHEEL_SHA256 = "8656da101ab5004c16530ed75b8cb7baac44c2c9fa5ae3def6128ba5be9d283c"
JAR_SHA256 = "e7d7c3d533a4800bf2581f820d2c1e9310d70ff40b52fc1a742793eceb89a660"
#: the jar's path inside the wheel
JAR_MEMBER = "capymoa/jar/moa.jar"
#: the environment variable naming a jar
ENV = "DELAYCV_MOA_JAR"
INSTALL_COMMAND = f"{Path(sys.executable).name} -m delaycv.jvm.jar install"


def default_path() -> Path:
    """Where ``install`` puts the jar (under the user's cache directory)."""
    return cache_dir() / f"moa-{MOA_VERSION}" / "moa.jar"


def _stamp(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _stat_line(path: Path) -> str:
    st = path.stat()
    return f"{JAR_SHA256} {st.st_size} {st.st_mtime_ns}"


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check(path: Path, origin: str) -> Path:
    """``path`` if it is the pinned jar, else a ConfigError naming it and ``origin`` (how it was
    found)."""
    if not path.is_file():
        raise ConfigError(
            f"no MOA jar at {path} ({origin})",
            location="MOA learner",
            expected=f"MOA {MOA_VERSION}'s jar: run {INSTALL_COMMAND}",
        )
    stamp = _stamp(path)
    try:
        if stamp.read_text().strip() == _stat_line(path):
            return path
    except OSError:
        pass
    found = sha256(path)
    if found != JAR_SHA256:
        raise ConfigError(
            f"the MOA jar {path} ({origin}) has SHA-256 {found[:16]}..., not that of the pinned "
            f"MOA {MOA_VERSION} (capymoa {CAPYMOA_VERSION}): another release gives other numbers",
            location="MOA learner",
            expected=f"the pinned jar, SHA-256 {JAR_SHA256[:16]}...: run {INSTALL_COMMAND}"
            + (f" and unset {ENV}" if origin.startswith(ENV) else ""),
        )
    with contextlib.suppress(OSError):  # a read-only place: checked again next time
        stamp.write_text(_stat_line(path) + "\n")
    return path


def locate() -> Path:
    """The pinned jar, checked (:func:`check`); where it is looked for: the module docstring."""
    given = os.environ.get(ENV)
    if given:
        return check(Path(given).expanduser(), f"{ENV}")
    return check(default_path(), f"the default place; {ENV} is not set")


def install(dest: Path | None = None, *, quiet: bool = False) -> Path:
    """Download capymoa's wheel from PyPI (pip, without dependencies), check its SHA-256, unpack
    its jar to ``dest`` (default :func:`default_path`) and check the jar's. Nothing is written
    when a check fails; an installed, unchanged jar is left as it is."""
    dest = Path(dest) if dest is not None else default_path()
    if dest.is_file():
        try:
            check(dest, "installed")
            if not quiet:
                print(f"delaycv: MOA {MOA_VERSION} is at {dest}")
            return dest
        except ConfigError:
            pass
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
        cmd += ["--disable-pip-version-check", "-d", tmp, f"capymoa=={CAPYMOA_VERSION}"]
        if subprocess.run(cmd, check=False).returncode != 0:
            raise ConfigError(
                f"pip could not download capymoa {CAPYMOA_VERSION}",
                location="MOA jar",
                expected="access to PyPI (or set DELAYCV_MOA_JAR to MOA 2024.07's jar)",
            )
        wheel = Path(tmp) / WHEEL
        if not wheel.is_file() or sha256(wheel) != WHEEL_SHA256:
            raise ConfigError(
                f"the downloaded {WHEEL} is not the pinned one",
                location="MOA jar",
                expected=f"SHA-256 {WHEEL_SHA256}",
            )
        part = Path(tmp) / "moa.jar"
        with zipfile.ZipFile(wheel) as zf, zf.open(JAR_MEMBER) as src, open(part, "wb") as out:
            while block := src.read(1 << 20):
                out.write(block)
        if sha256(part) != JAR_SHA256:
            raise ConfigError(
                f"the jar in {WHEEL} is not the pinned one",
                location="MOA jar",
                expected=f"SHA-256 {JAR_SHA256}",
            )
        os.replace(part, dest)
    _stamp(dest).write_text(_stat_line(dest) + "\n")
    if not quiet:
        print(f"delaycv: MOA {MOA_VERSION} (GPL-3.0, from capymoa {CAPYMOA_VERSION}) is at {dest}")
    return dest


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args not in (["install"], ["path"]):
        print("usage: python -m delaycv.jvm.jar install|path", file=sys.stderr)
        return 2
    try:
        print(install() if args == ["install"] else locate())
    except ConfigError as err:
        print(f"delaycv: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # a cache folder that cannot be written: name it
        where = err.filename or default_path().parent
        print(
            f"delaycv: error: {where}: {err.strerror or err} (expected a folder the user may "
            f"write: set XDG_CACHE_HOME, or {ENV} to a copy of the jar)",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
