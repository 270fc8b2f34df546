"""The folders and paths of a study: where its outputs go, and that every path fits.

``results`` (the study's tables and figures) and ``runs`` (the run directories) are checked
and put in their normal form (:func:`resolve_folders`); dataset, learner and policy names must
fit a file name (:func:`check_name_lengths`, :data:`NAME_MAX_BYTES`) and the longest path the
workflow writes must fit ``PATH_MAX`` (:func:`check_path_lengths`, :data:`PATH_MAX_BYTES`).
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable
from pathlib import Path

from delaycv.common.errors import ConfigError
from delaycv.study.mistakes import Mistakes
from delaycv.study.runs import RUN_KEY_LENGTH

#: the top-level folders of the workflow's checkout (its code, configs, docs, tests, the
#: environments, the generated streams and the logs): a study's outputs may not go into them
CHECKOUT_FOLDERS = (
    ".git",
    ".snakemake",
    ".test",
    ".venv",
    "benchmarks",
    "config",
    "delaycv",
    "docs",
    "envs",
    "logs",
    "profiles",
    "resources",
    "scripts",
    "tests",
    "workflow",
)


#: what the workflow writes directly under a study's ``results`` folder: ``runs`` inside
#: ``results`` may not be (or be inside) one of them
STUDY_OUTPUTS = (
    "benchmarks",
    "datasets.csv",
    "datasets.html",
    "figures",
    "merged",
    "merged.parquet",
    "rankings",
    "runs.csv",
    "runs.html",
    "runs.parquet",
    "tests",
)


def resolve_folders(
    config: dict,
    source: str,
    cwd: str | os.PathLike | None,
    broken: set[tuple],
    mistakes: Mistakes,
) -> None:
    """Normalise and check, in place, the ``results`` and ``runs`` folders of a study.

    ``results`` holds the study's tables and figures, ``runs`` the run directories (left out:
    ``<results>/runs``). Each is a relative folder of the working directory, written out (``~``
    is not expanded), not the working directory itself (``.``) nor inside one of the checkout's
    own folders (:data:`CHECKOUT_FOLDERS`); ``runs`` is not ``results``, not inside one of the
    study's outputs (:data:`STUDY_OUTPUTS`), and ``results`` not inside ``runs``. Given the
    working directory, neither may be a file or lie under one.

    Parameters
    ----------
    config : dict
        The config; its ``results`` and ``runs`` are set to their normal form.
    source : str
        The file the errors name.
    cwd : str or os.PathLike, optional
        The working directory (None: the folders on disk are not looked at).
    broken : set of tuple
        What was left out (a folder with a mistake of its own is not checked again).
    mistakes : Mistakes
        Where each folder's own mistake goes.

    Raises
    ------
    ConfigError
        ``runs`` and ``results`` overlap.
    """
    given = {key: key in config for key in ("results", "runs")}
    config["results"] = posixpath.normpath(str(config["results"]))
    config.setdefault("runs", posixpath.join(config["results"], "runs"))
    config["runs"] = posixpath.normpath(str(config["runs"]))
    good = {}
    for key in ("results", "runs"):
        if (key,) in broken or (key == "runs" and not given["runs"] and "results" not in good):
            continue  # a mistake of its own, or the default runs of a refused results
        with mistakes.guard():
            _check_folder(config[key], key, source, cwd)
            good[key] = config[key]
            inside = key == "runs" and config["runs"].startswith(good.get("results", "") + "/")
            if cwd is not None and not inside:  # (runs inside results: walked with it)
                _warn_unchangeable(config[key], key, source, cwd, mistakes)
    if len(good) == 2:
        _check_apart(good["results"], good["runs"], source)


def _check_apart(results: str, runs: str, source: str) -> None:
    """``runs`` is not ``results``, does not hold it, and is in none of the study's outputs."""
    example = f"{results}/runs"
    if results == runs:
        raise ConfigError(
            "the run directories and the study's tables would share one folder",
            path=source,
            location="key runs",
            expected=f"a folder other than results ({results}), e.g. {results}/runs",
        )
    if results.startswith(runs + "/"):
        raise ConfigError(
            f"the study's tables ({results}) would be among the run directories ({runs})",
            path=source,
            location="key runs",
            expected=f"a runs folder that does not hold the study's results folder, e.g. {example}",
        )
    if runs.startswith(results + "/"):
        first = runs[len(results) + 1 :].split("/")[0]
        if first in STUDY_OUTPUTS:
            raise ConfigError(
                f"{runs!r} is inside {results}/{first}, an output of the study",
                path=source,
                location="key runs",
                expected=f"a folder that no output of the study uses (not {results}/"
                + f"{{{','.join(STUDY_OUTPUTS)}}}), e.g. {results}/runs",
            )


def _check_folder(folder: str, key: str, source: str, cwd: str | os.PathLike | None) -> None:
    def refuse(message: str, expected: str = "a relative path, such as results/my-study"):
        raise ConfigError(message, path=source, location=f"key {key}", expected=expected)

    if folder.startswith("~"):
        refuse(
            f"{folder!r} starts with ~, which is not expanded: it would make a folder named "
            f"{folder.split('/')[0]!r}",
            "the path written out, relative to the working directory, e.g. results/my-study",
        )
    parts = Path(folder).parts
    if Path(folder).is_absolute() or ".." in parts:
        refuse(
            f"{folder!r} is not a folder inside the working directory",
            "a relative path without '..', such as results/my-study",
        )
    if folder == ".":
        refuse(
            "'.' is the working directory itself: the outputs would land among the checkout's "
            "own folders",
            "a folder of the study's own, e.g. results/my-study",
        )
    if parts[0] in CHECKOUT_FOLDERS:
        refuse(
            f"{folder!r} is inside {parts[0]}/, a folder of the workflow's own",
            f"a folder outside {', '.join(CHECKOUT_FOLDERS)}, e.g. results/my-study",
        )
    if cwd is None:
        return
    path = Path(cwd)
    for i, part in enumerate(parts):
        path = path / part
        if path.exists() and not path.is_dir():
            what = (
                repr(folder)
                if i == len(parts) - 1
                else f"{'/'.join(parts[: i + 1])!r} of {folder!r}"
            )
            refuse(f"{what} is a file, not a folder", "a folder (or a path where one can be made)")
        if not path.exists():
            if not os.access(path.parent, os.W_OK | os.X_OK):
                refuse(
                    f"{folder!r} cannot be made: {str(path.parent.relative_to(cwd)) or '.'!r} "
                    "is not writable",
                    "a folder this user can write",
                )
            break
    else:
        if not os.access(path, os.W_OK | os.X_OK):
            refuse(f"{folder!r} is not writable", "a folder this user can write")


def _warn_unchangeable(
    folder: str, key: str, source: str, cwd: str | os.PathLike, mistakes: Mistakes
) -> None:
    """A warning for the first folder or file in ``folder`` that cannot be changed or removed
    (:func:`unchangeable_path`): a job that must be redone there stops with Snakemake's own
    PermissionError, which the workflow cannot catch. (A warning: outputs made unchangeable on
    purpose are fine as long as no job must redo them.)"""
    path = Path(cwd) / folder
    try:
        stuck = unchangeable_path(path) if path.is_dir() else None
    except OSError:  # (a path too long: a mistake of its own, check_path_lengths)
        return
    if stuck is not None:
        mistakes.warnings.append(
            ConfigError(
                f"{str(stuck.relative_to(cwd))!r} cannot be changed or removed "
                f"({unchangeable_why(stuck)}): a job that must redo its outputs there would "
                "stop with Snakemake's own PermissionError",
                path=source,
                location=f"key {key}",
                expected="folders and files this user can write (chattr -i, chmod u+w; "
                'docs/workflow.md, "Snakemake\'s own errors")',
            )
        )


#: Linux's ioctl that reads an inode's flags, and the flags that forbid changing it
_FS_IOC_GETFLAGS = 0x80086601
_FS_IMMUTABLE_FL, _FS_APPEND_FL = 0x00000010, 0x00000020


def _inode_flags(path: Path) -> int:
    """The inode flags of ``path`` (``lsattr``); 0 where they cannot be read (another system,
    a file system without them)."""
    try:
        import array
        import fcntl

        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except (ImportError, OSError):
        return 0
    try:
        flags = array.array("i", [0])
        fcntl.ioctl(handle, _FS_IOC_GETFLAGS, flags, True)
        return int(flags[0])
    except OSError:
        return 0
    finally:
        os.close(handle)


def unchangeable_why(path: Path) -> str:
    """Why ``path`` cannot be changed, in words (see :func:`unchangeable_path`)."""
    flags = _inode_flags(path)
    if flags & _FS_IMMUTABLE_FL:
        return "it is immutable: chattr +i"
    if flags & _FS_APPEND_FL:
        return "it is append-only: chattr +a"
    return "this user cannot write to it"


def unchangeable_path(folder: Path) -> Path | None:
    """The first folder or file in ``folder`` (itself included) that cannot be changed or
    removed, as Snakemake must to redo a job: an immutable or append-only one (``chattr +i``,
    ``+a``: refused even to root), or a folder this user cannot write to; None when there is
    none."""
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        here = Path(root)
        if not os.access(here, os.W_OK | os.X_OK) or _inode_flags(here) & (
            _FS_IMMUTABLE_FL | _FS_APPEND_FL
        ):
            return here
        for name in sorted(files):
            if _inode_flags(here / name) & (_FS_IMMUTABLE_FL | _FS_APPEND_FL):
                return here / name
    return None


#: the longest name (bytes) of a dataset, learner or policy: each becomes a folder or part of a
#: file name, and the longest file name holding one (a figure's temporary, 117 bytes more with
#: the metric's name and the host's) must stay within the file system's 255 bytes
NAME_MAX_BYTES = 100


#: the longest path (bytes) the workflow may write (Linux's PATH_MAX)
PATH_MAX_BYTES = 4096


def check_name_lengths(config: dict, source: str, mistakes: Mistakes) -> None:
    """Refuse a dataset, learner or policy name longer than :data:`NAME_MAX_BYTES`.

    Names become path components (folders, parts of file names).

    Parameters
    ----------
    config : dict
        The config, its policies expanded.
    source : str
        The file the errors name.
    mistakes : Mistakes
        Where each long name's mistake goes.
    """
    named = [(s, n) for s in ("datasets", "learners") for n in config[s]]
    named += [("policies", n) for n in config["policies"]]
    for section, name in named:
        size = len(str(name).encode("utf-8"))
        if size > NAME_MAX_BYTES:
            shown = name if len(name) <= 40 else f"{name[:40]}..."
            with mistakes.guard():
                raise ConfigError(
                    f"the name {shown!r} is {size} bytes long: it becomes a folder and part of "
                    "file names, and a file name may have at most 255 bytes",
                    path=source,
                    location=f"key {section}.{name}",
                    expected=f"a name of at most {NAME_MAX_BYTES} bytes",
                )


def check_path_lengths(
    config: dict,
    source: str,
    cwd: str | os.PathLike | None,
    broken: set[tuple],
    runs_given: bool,
    mistakes: Mistakes,
) -> None:
    """Refuse a ``results`` or ``runs`` folder under which a path would exceed PATH_MAX.

    The longest path the workflow writes (a run directory's temporary, its log, a figure's
    temporary), with the longest names of the study, must fit :data:`PATH_MAX_BYTES`.

    Parameters
    ----------
    config : dict
        The config, its policies expanded and its folders resolved.
    source : str
        The file the errors name.
    cwd : str or os.PathLike, optional
        The working directory (None: nothing is checked).
    broken : set of tuple
        What was left out (a folder with a mistake of its own is not checked again).
    runs_given : bool
        Whether the config named ``runs`` (else it is ``<results>/runs``).
    mistakes : Mistakes
        Where each folder's mistake goes.
    """
    if cwd is None:
        return
    base = os.path.abspath(cwd)
    for key, paths in _longest_paths(config, base).items():
        if (key,) in broken or (key == "runs" and not runs_given and ("results",) in broken):
            continue  # its own mistake, or the default runs (<results>/runs) of a long results
        size = max(len(path.encode("utf-8")) for path in paths)
        if size > PATH_MAX_BYTES:
            folder = config[key] if len(config[key]) <= 60 else f"{config[key][:60]}..."
            with mistakes.guard(broken, (key,)):
                raise ConfigError(
                    f"the longest file path the workflow would write under {folder!r} is {size} "
                    f"bytes long (from the working directory {base})",
                    path=source,
                    location=f"key {key}",
                    expected=f"paths of at most {PATH_MAX_BYTES} bytes: a shorter folder, "
                    "shorter names or a working directory nearer the root",
                )


def _longest_paths(config: dict, base: str) -> dict[str, list[str]]:
    """The longest paths the workflow writes under ``results`` and under ``runs`` (``base``: the
    working directory, absolute)."""

    def longest(names: Iterable) -> str:
        return max((str(n) for n in names), key=len, default="x")

    d, lr = longest(config["datasets"]), longest(config["learners"])
    p, s = longest(config["policies"]), longest(config["seeds"])
    tmp = "/." + "x" * 20 + ".4194304-" + "h" * 64 + ".abcdefgh.tmp"  # atomic's temporaries
    run = f"{d}/{lr}/seed{s}/{p}/{'0' * RUN_KEY_LENGTH}"
    return {
        "results": [
            f"{base}/{config['results']}/benchmarks/evaluate/{run}.tsv",
            f"{base}/{config['results']}/figures/{d}/learning_curves_{d}_{'x' * 20}_observed.png"
            + tmp,
        ],
        "runs": [f"{base}/{config['runs']}/{run}{tmp}", f"{base}/logs/{config['runs']}/{run}.log"],
    }
