"""A MOA classifier as a delaycv learner: :class:`MoaClassifier`.

The spec is MOA's command-line string of the classifier, as MOA users write it after ``-l``
(``trees.HoeffdingTree -g 200``, ``meta.OzaBag -l trees.HoeffdingTree -s 10``): a class under
``moa.classifiers`` (or a full class name) and its options. A learner is built for each fold;
the loop sees the same interface as a river learner's (docs/moa-learners.md):

- ``predict_proba_one(x)``: MOA's votes for the instance, normalised: ``{0: v0 / s, 1: v1 / s}``
  with ``s = v0 + v1`` (where ``v1 > v0`` by an amount the division rounds away, P(1) is the float
  just above 0.5, so that the prediction is MOA's class 1); no votes, or all zero, is ``{}`` (read as P(1) = 0.5, predicted negative,
  as MOA's ``maxIndex`` of no votes is class 0); votes that are no probabilities (a negative,
  infinite or NaN vote: HoeffdingTree's naive Bayes leaves give ``[inf, NaN]`` at times) are read
  as MOA's evaluators read them, the class of the first largest vote, as P(1) = 0 or 1, and
  counted (``votes_as_class``; the run warns with the count per fold);
- ``learn_one(x, y, w=1)``: ``trainOnInstance`` of the instance with class ``y`` and weight ``w``
  (the fold's training weight is the instance's weight, as MOA's bagging gives it; MOA skips an
  instance of weight 0).

The instances are MOA ``DenseInstance`` objects over a header of the stream's features (numeric
attributes, in the stream's order) and a nominal class ``{0, 1}``; a missing value is NaN, MOA's
missing value. :meth:`MoaClassifier.encode_records` makes them once per chunk for all folds, with the
true label as their class; training on another label or weight trains a copy, so that an
instance shared by the folds (and any MOA learner keeping it) never changes. A dict ``x`` (a
river record) is accepted too, converted on each call.

Seeds: a randomisable MOA classifier (``isRandomizable()``, e.g. ``meta.OzaBag``) gets the fold's
learner seed through ``setRandomSeed``, unless the spec sets ``seed`` (``{moa: ..., seed: 1}``,
then every fold uses it, as MOA's own task does with its learner's copies). MOA 2024.07 has no
``-r`` option on classifiers.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from delaycv.common.errors import ConfigError
from delaycv.jvm import machine
from delaycv.protocol.learners import MOA_PREFIX

#: the spec's keys (a dict spec): the MOA string, a seed for every fold, the JVM's heap
SPEC_KEYS = ("moa", "seed", "heap")
#: P(1) of votes whose larger is class 1's by less than the division can tell (the float just
#: above 0.5): the order of the votes is kept, as MOA's maxIndex reads it
ABOVE_HALF = math.nextafter(0.5, 1.0)
EXPECTED = "a MOA classifier's command line such as 'trees.HoeffdingTree -g 200'"

_java: dict[str, Any] = {}  # the Java classes, once the JVM runs
_headers: dict[tuple, Any] = {}  # the header of a feature list (shared by the folds' instances)


def normalise_spec(spec: Any, where: str = "learner") -> dict:
    """``spec`` as a dict ``{moa, seed?, heap?}`` with its keys and value types checked (not the
    MOA string itself: :func:`build` asks MOA)."""
    if isinstance(spec, str):  # "moa:trees.HoeffdingTree", or the command line alone
        spec = {"moa": spec.removeprefix(MOA_PREFIX)}
    unknown = sorted(set(spec) - set(SPEC_KEYS))
    if unknown:
        raise ConfigError(
            f"unknown key(s) {', '.join(unknown)} of a MOA learner",
            location=f"key {where}.{unknown[0]}",
            expected="moa, and optionally seed and heap",
        )
    text = spec["moa"]
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"MOA learner {text!r}", location=f"key {where}.moa", expected=EXPECTED)
    seed = spec.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ConfigError(
            f"seed {seed!r}", location=f"key {where}.seed", expected="an integer (Java int)"
        )
    if seed is not None and not -(2**31) <= seed < 2**31:
        raise ConfigError(
            f"seed {seed}", location=f"key {where}.seed", expected="a Java int, -2^31 .. 2^31-1"
        )
    out = {"moa": " ".join(text.split())}
    if seed is not None:
        out["seed"] = seed
    heap = machine.check_heap(spec.get("heap"), f"key {where}.heap")
    if heap is not None:
        out["heap"] = heap
    return out


def label(spec: dict | str) -> str:
    """A short name: the classifier's class name (``HoeffdingTree``)."""
    text = str(normalise_spec(spec)["moa"])
    first = text.strip().split(" ", 1)[0].strip("()")
    return first.split(".")[-1] or "moa"


def java() -> dict[str, Any]:
    """The Java classes delaycv uses (the JVM started on first use)."""
    if not _java:
        machine.start()
        from jpype import JArray, JClass, JDouble

        _java.update(
            ClassOption=JClass("moa.options.ClassOption"),
            Classifier=JClass("moa.classifiers.Classifier"),
            MultiClassClassifier=JClass("moa.classifiers.MultiClassClassifier"),
            Attribute=JClass("com.yahoo.labs.samoa.instances.Attribute"),
            Instances=JClass("com.yahoo.labs.samoa.instances.Instances"),
            InstancesHeader=JClass("com.yahoo.labs.samoa.instances.InstancesHeader"),
            DenseInstance=JClass("com.yahoo.labs.samoa.instances.DenseInstance"),
            ArrayList=JClass("java.util.ArrayList"),
            doubles=JArray(JDouble),
        )
    return _java


def _java_message(err: Exception) -> str:
    """MOA's message: the first line of each exception of the chain, joined."""
    parts = []
    cause = err
    while cause is not None and len(parts) < 6:
        get = getattr(cause, "getMessage", None)
        text = str(get()) if callable(get) and get() is not None else str(cause)
        line = text.strip().splitlines()[0].strip() if text.strip() else type(cause).__name__
        line = re.sub(r"^java\.lang\.\w+: ", "", line).rstrip(".")
        if line not in parts:
            parts.append(line)
        get_cause = getattr(cause, "getCause", None)
        cause = get_cause() if callable(get_cause) else None
    return ": ".join(parts)


def build(text: str, where: str = "learner"):
    """The prepared MOA classifier of the command line ``text`` (untrained), or a ConfigError
    with MOA's message: an unknown class or option, a malformed value, a class that is not a
    classifier of classes (a regressor, a clusterer)."""
    j = java()
    try:
        obj = j["ClassOption"].cliStringToObject(text, j["Classifier"], None)
    except Exception as err:
        raise ConfigError(
            f"MOA cannot build {text!r}: {_java_message(err)}",
            location=f"key {where}",
            expected=EXPECTED,
        ) from None
    if not j["MultiClassClassifier"].class_.isInstance(obj):
        raise ConfigError(
            f"{text!r} is {obj.getClass().getName()}, which is not a MOA classifier of classes "
            "(a regressor?)",
            location=f"key {where}",
            expected=EXPECTED,
        )
    return obj


def header(features: tuple[str, ...]):
    """The MOA header of a stream with ``features`` (numeric) and the class ``{0, 1}`` last."""
    got = _headers.get(features)
    if got is None:
        j = java()
        atts = j["ArrayList"]()
        for name in features:
            atts.add(j["Attribute"](name))
        values = j["ArrayList"]()
        values.add("0")
        values.add("1")
        atts.add(j["Attribute"]("class", values))
        instances = j["Instances"]("delaycv", atts, 0)
        instances.setClassIndex(len(features))
        got = _headers[features] = j["InstancesHeader"](instances)
    return got


class MoaClassifier:
    """One fold's MOA classifier (see the module docstring)."""

    #: no trial run before an evaluation (delaycv.engine.probe_learner): MOA checked the command
    #: line when it built the classifier, and every vote is read (normalised, or as MOA reads it)
    needs_no_probe = True

    def __init__(self, spec: dict | str, seed: int | None = None, *, where: str = "learner"):
        spec = normalise_spec(spec, where)
        machine.start(spec.get("heap"))
        self.spec = spec
        self.text = spec["moa"]
        self.model = build(self.text, f"{where}.moa" if where != "learner" else where)
        use = spec.get("seed", seed)
        if use is not None and self.model.isRandomizable():
            # a Java int: the fold's learner seed is a 32-bit unsigned draw
            self.model.setRandomSeed(int(((int(use) + 2**31) % 2**32) - 2**31))
        self.model.prepareForUse()
        self.features: tuple[str, ...] | None = None
        self.votes_as_class = 0  # votes that were no probabilities, read as the class MOA reads
        self._predict = self.model.getVotesForInstance
        self._train = self.model.trainOnInstance
        from delaycv.jvm import rows

        #: the Java fold loop (delaycv.jvm.rows), or None: the engine's loops call this object
        self.run_rows = rows.run_rows if rows.USABLE else None

    def __repr__(self) -> str:
        return f"MoaClassifier({self.text!r})"

    # ---------------------------------------------------------------- the stream's instances

    def bind_features(self, features) -> None:
        """Fix the header to the stream's ``features`` (before the first instance)."""
        self.features = tuple(features)
        self.model.setModelContext(header(self.features))
        self.model.resetLearning()

    def encode_records(self, chunk) -> list:
        """The instances of a :class:`~delaycv.data.stream.StreamChunk` (its feature matrix, or its
        x dicts; a missing value is NaN) with their true labels as class. With the Java loop,
        they stay in Java (:class:`delaycv.jvm.rows.ChunkInstances`); else one Python handle
        each."""
        if self.features is None:
            raise RuntimeError("MoaClassifier.bind_features(features) comes before encode_records")
        matrix = getattr(chunk, "matrix", None)
        if matrix is None or matrix.shape[1] != len(self.features):
            matrix = self._matrix(chunk.records)
        values = np.column_stack([matrix, np.asarray(chunk.label, dtype=np.float64)])
        if self.run_rows is not None:  # one Java call for the chunk, no Python handles
            from delaycv.jvm import rows

            return rows.instances(header(self.features), values)
        return self._python_instances(values)

    def _matrix(self, records: list) -> np.ndarray:
        names = self.features
        rows = [[_number(x.get(name, math.nan), name) for name in names] for x in records]
        return np.array(rows, dtype=np.float64).reshape(len(records), len(names))

    def _python_instances(self, values: np.ndarray) -> list:
        j = java()
        make, doubles, head = j["DenseInstance"], j["doubles"], header(self.features)
        out = []
        for row in values.tolist():
            inst = make(1.0, doubles(row))
            inst.setDataset(head)
            out.append(inst)
        return out

    def _instance(self, x, y: int | None = None):
        if isinstance(x, dict):
            if self.features is None:  # a learner used outside the engine: the keys it sees
                self.bind_features(sorted(x))
            values = np.column_stack([self._matrix([x]), [0.0 if y is None else float(y)]])
            return self._python_instances(values)[0]
        return x

    # ---------------------------------------------------------------- the learner interface

    def predict_proba_one(self, x) -> dict:
        votes = self._predict(self._instance(x))
        n = len(votes)
        v0 = float(votes[0]) if n > 0 else 0.0
        v1 = float(votes[1]) if n > 1 else 0.0
        total = v0 + v1
        if v0 >= 0 and v1 >= 0 and total < math.inf:  # (False for NaN)
            if total > 0:
                a, b = v0 / total, v1 / total
                if v1 > v0 and not b / (a + b) > 0.5:  # a tie made by rounding: MOA reads 1
                    return {0: 1.0 - ABOVE_HALF, 1: ABOVE_HALF}
                return {0: a, 1: b}
            return {}
        # no probabilities (HoeffdingTree's naive Bayes leaves can vote inf and NaN): the class
        # MOA's evaluators read, the first largest vote (MOA's Utils.maxIndex), counted
        self.votes_as_class += 1
        return {0: 0.0, 1: 1.0} if v1 > v0 else {0: 1.0, 1: 0.0}

    def learn_one(self, x, y: int, w: float = 1.0) -> None:
        if isinstance(x, dict):
            inst = self._instance(x, y)
        else:
            inst = x
            if w == 1 and inst.classValue() == y:
                self._train(inst)
                return
            inst = inst.copy()
            inst.setClassValue(float(y))
        if w != 1:
            inst.setWeight(float(w))
        self._train(inst)


def _number(value, name: str) -> float:
    if isinstance(value, str):
        raise ConfigError(
            f"feature {name!r} is categorical ({value!r}): MOA learners here take numeric features",
            location="MOA learner",
            expected="numeric features (encode the category as numbers in the stream's mapping)",
        )
    return float(value)
