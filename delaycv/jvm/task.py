"""MOA's own delayed cross-validation task on a delaycv stream: its input and its mapping.

MOA's ``EvaluatePrequentialDelayedCV`` (in the pinned jar) predicts every instance with every
fold's learner and trains fold i on an instance once ``k`` more of fold i's training instances
have arrived, right after predicting the last of them. delaycv's count window of ``c`` instances
releases a label when instance ``i + c`` arrives, before predicting it. So with K folds:

- split-validation (fold i trains the instances n with n mod K = i): ``c = k K + 1``;
- cross-validation (fold i trains all but those): when K - 1 divides k, ``c = k K / (K - 1) + 1``
  (any K consecutive instances hold K - 1 training instances of a fold); other k map onto no
  count window (the wait in instances then depends on the position);
- bootstrap: MOA draws one Poisson stream shared by the folds and trains once whatever the draw;
  delaycv draws per fold and trains with the weight, so no mapping exists.

With the mapped window, the ``delay`` policy and a MOA learner, delaycv predicts exactly what
MOA's task predicts, instance by instance and fold by fold (``tests/jvm/test_moa_learners.py`` runs
the task with the same jar).

>>> count_window("split", 10, folds=10)
'101i'
>>> count_window("cv", 90, folds=10)
'101i'
>>> task_command(Path("s.arff"), "trees.HoeffdingTree", folds=10, method="cv", delay=90, every=500)
'EvaluatePrequentialDelayedCV -l (trees.HoeffdingTree) -s (ArffFileStream -f s.arff -c -1) -w 10 -a Cross-Validation -k 90 -f 500'
"""

from __future__ import annotations

import math
from pathlib import Path

from delaycv.common.errors import ConfigError

#: delaycv's validation schemes -> MOA's names of them
METHODS = {
    "cv": "Cross-Validation",
    "bootstrap": "Bootstrap-Validation",
    "split": "Split-Validation",
}


def count_window(method: str, k: int, *, folds: int) -> str:
    """delaycv's count window (``"<c>i"``) that MOA's delay ``k`` maps onto (module docstring)."""
    if method == "split":
        return f"{k * folds + 1}i"
    if method == "cv" and folds > 1 and k % (folds - 1) == 0:
        return f"{k * folds // (folds - 1) + 1}i"
    raise ConfigError(
        f"MOA's delay {k} under {method} with {folds} folds maps onto no count window",
        location="MOA task",
        expected="split, or cv with a delay that folds - 1 divides",
    )


def task_command(
    arff: Path, learner: str, *, folds: int, method: str, delay: int, every: int
) -> str:
    """The MOA task's command line (for ``moa.DoTask``) on ``arff``."""
    return (
        f"EvaluatePrequentialDelayedCV -l ({learner}) -s (ArffFileStream -f {arff} -c -1) "
        f"-w {folds} -a {METHODS[method]} -k {delay} -f {every}"
    )


def _quoted(text: str) -> str:
    """A name or nominal value as ARFF quotes it."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def write_arff(stream, path: Path) -> Path:
    """``stream``'s features and label as the ARFF MOA's ``ArffFileStream`` reads, with the class
    ``{0,1}`` last: the attributes a MOA learner of delaycv sees, in their order (a categorical
    feature nominal, its values its categories in their order, as delaycv's header lists them;
    ``?``: missing; numbers written exactly, as Python's ``repr``)."""
    names = stream.feature_names
    categories = stream.categories()
    lines = ["@relation delaycv", ""]
    for name in names:
        kind = (
            "{" + ",".join(_quoted(v) for v in categories[name]) + "}"
            if name in categories
            else "numeric"
        )
        lines.append(f"@attribute {_quoted(name)} {kind}")
    lines += ["@attribute class {0,1}", "", "@data"]
    columns = [
        [
            "?"
            if v is None or (isinstance(v, float) and math.isnan(v))
            else (_quoted(v) if name in categories else repr(float(v)))
            for v in stream.features[name].astype(object).tolist()
        ]
        for name in names
    ]
    for i, y in enumerate(stream.label.tolist()):
        lines.append(",".join([*(column[i] for column in columns), str(int(y))]))
    path = Path(path)
    path.write_text("\n".join(lines) + "\n")
    return path
