"""Write outputs all-or-nothing: to a temporary name beside the destination, then rename.

A temporary of the output ``NAME`` is ``.NAME.<pid>-<host>.<random>.tmp``: the writer's process
id and (short) host name. A writer killed without notice (``kill -9``, a lost node) cannot remove
its temporary; the next writer of the same output removes it (:func:`remove_stale`) when the
process named in it is gone: same host, and no process with that id. A temporary of a live
process (another writer of the same output, running now) is never touched, nor one of another
host (its process cannot be looked up from here), nor a name without a process id.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

from delaycv.common import interrupt


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _host() -> str:
    """The short host name as it may appear in a file name (letters, digits, hyphens)."""
    name = socket.gethostname().split(".", 1)[0]
    return re.sub(r"[^A-Za-z0-9-]", "-", name) or "host"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. PermissionError: a process of another user has that id
        return True
    return True


def remove_stale(dest: str | os.PathLike) -> list[Path]:
    """Remove the temporaries of ``dest`` left by writers that are gone (module docstring);
    return them. Errors while removing are ignored (the next writer tries again)."""
    dest = Path(dest)
    pattern = re.compile(
        rf"\.{re.escape(dest.name)}\.(?P<pid>\d+)-(?P<host>[A-Za-z0-9-]+)\.[a-z0-9_]+\.tmp"
    )
    host, removed = _host(), []
    try:
        entries = list(dest.parent.iterdir())
    except OSError:
        return removed
    for entry in entries:
        found = pattern.fullmatch(entry.name)
        if found is None or found["host"] != host or _alive(int(found["pid"])):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                entry.unlink()
        removed.append(entry)
    return removed


def _new_temporary(dest: Path, directory: bool) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(dest)
    prefix = f".{dest.name}.{os.getpid()}-{_host()}."
    if directory:
        tmp = Path(tempfile.mkdtemp(prefix=prefix, suffix=".tmp", dir=dest.parent))
        os.chmod(tmp, 0o777 & ~_umask())
        return tmp
    fd, name = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=dest.parent)
    os.close(fd)
    os.chmod(name, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual permissions
    return Path(name)


@contextlib.contextmanager
def temporary(dest: str | os.PathLike, *, directory: bool = False) -> Iterator[Path]:
    """Yield a new temporary file (or ``directory``) beside the output ``dest``, named for it and
    for this process, after removing the stale temporaries of ``dest``; it is removed when the
    block ends, unless it was renamed meanwhile. The exceptions of Ctrl-C and SIGTERM
    (:mod:`delaycv.common.interrupt`) are held while it is created: they come when its removal is
    armed, never between."""
    dest = Path(dest)
    interrupt.hold()
    try:
        tmp = _new_temporary(dest, directory)
    except BaseException:
        interrupt.release()
        raise
    try:
        interrupt.release()  # the exception of a signal that came meanwhile comes here
        yield tmp
    finally:
        if directory:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.unlink(missing_ok=True)


@contextlib.contextmanager
def atomic_path(dest: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``dest``; on success it replaces ``dest``, on error it is removed.

    >>> folder = tempfile.TemporaryDirectory()
    >>> dest = Path(folder.name) / "out.txt"
    >>> with atomic_path(dest) as tmp:
    ...     _ = tmp.write_text("the table")
    >>> dest.read_text()
    'the table'
    >>> with atomic_path(dest) as tmp:
    ...     _ = tmp.write_text("half a table")
    ...     raise ValueError("the writer failed")
    Traceback (most recent call last):
    ValueError: the writer failed
    >>> dest.read_text(), [p.name for p in Path(folder.name).iterdir()]
    ('the table', ['out.txt'])
    >>> folder.cleanup()
    """
    with temporary(dest) as tmp:
        yield tmp
        interrupt.check()  # (a stop Python swallowed meanwhile: no output)
        os.replace(tmp, dest)


@contextlib.contextmanager
def atomic_dir(dest: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary directory beside ``dest``; on success it replaces ``dest`` whole."""
    dest = Path(dest)
    with temporary(dest, directory=True) as tmp:
        yield tmp
        interrupt.check()
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)


#: Suffixes of the files delaycv writes: a new output directory named so is a mistake (the
#: command would make ``tests.csv/`` a folder of tables)
FILE_SUFFIXES = (".csv", ".parquet", ".html", ".json", ".png", ".pdf", ".svg")


def check_output(dest: str | os.PathLike, *, directory: bool = False) -> Path:
    """Check, before any work, that ``dest`` can be written; raise an InputError naming it if not.

    ``dest`` must not be a directory (a file output) or a file (``directory=True``), nor a new
    directory named like a file (:data:`FILE_SUFFIXES`), no existing
    ancestor may be a file, and the nearest existing ancestor must let us create an entry (tried
    with a temporary directory, removed at once: permissions, read-only file systems and root
    all answer truthfully). Creates nothing that stays.
    """
    from delaycv.common.errors import InputError

    dest = Path(dest)
    kind = "a directory" if directory else "a file"
    if directory and dest.suffix.lower() in FILE_SUFFIXES and not dest.is_dir():
        raise InputError(
            f"ends in {dest.suffix}, the suffix of a file, where a directory is written",
            path=str(dest),
            expected="a directory's name: the command writes its files into it",
        )
    if dest.exists():
        if directory and not dest.is_dir():
            raise InputError(
                "exists and is not a directory", path=str(dest), expected=f"{kind} to write"
            )
        if not directory and dest.is_dir():
            raise InputError("is a directory", path=str(dest), expected=f"{kind} to write")
    parent = dest.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise InputError(
            f"cannot be created: {parent} is not a directory",
            path=str(dest),
            expected=f"{kind} whose parent is a directory",
        )
    try:
        probe = tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".probe", dir=parent)
    except OSError as err:
        raise InputError(
            f"cannot be written: {parent}: {err.strerror}",
            path=str(dest),
            expected="a writable location",
        ) from None
    os.rmdir(probe)
    if directory and dest.is_dir() and not os.access(dest, os.W_OK | os.X_OK):
        raise InputError(
            "cannot be replaced: not writable", path=str(dest), expected="a writable directory"
        )
    return dest
