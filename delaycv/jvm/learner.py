"""A MOA classifier as a delaycv learner: :class:`MoaClassifier`.

The spec is MOA's command-line string of the classifier, as MOA users write it after ``-l``
(``trees.HoeffdingTree -g 200``, ``meta.OzaBag -l trees.HoeffdingTree -s 10``): a class under
``moa.classifiers`` (or a full class name) and its options; :func:`delaycv.protocol.moa_spec.moa_spec`
reads it (its keys, their values). A learner is built for each fold; the loop sees the same
interface as a river learner's (docs/moa-learners.md):

- ``predict_proba_one(x)``: ``{0: 1 - p, 1: p}`` with ``p`` MOA's P(1) of the instance's votes
  (:func:`vote_probability`, the one rule, which the Java loop ``FoldRows.java`` follows too);
  no votes, or all zero, is ``{}`` (read as P(1) = 0.5); votes that are no probabilities are read
  as MOA's evaluators read them and counted (``votes_as_class``; the run warns with the count per
  fold);
- ``learn_one(x, y, w=1)``: ``trainOnInstance`` of the instance with class ``y`` and weight ``w``
  (the fold's training weight is the instance's weight, as MOA's bagging gives it; MOA skips an
  instance of weight 0).

The instances are MOA ``DenseInstance`` objects over a header of the stream's features (in the
stream's order: numeric attributes, and nominal ones for its categorical features, whose values
are the feature's categories in their order, an ARFF's declared values:
:meth:`~delaycv.data.stream.Stream.categories`; an instance holds a value's index, as MOA's ARFF
reader gives it) and a nominal class ``{0, 1}``; a missing
value is NaN, MOA's missing value. :meth:`MoaClassifier.encode_records` makes them once per
chunk for all folds, with the true label as their class; training on another label or weight
trains a copy, so that an instance shared by the folds (and any MOA learner keeping it) never
changes. A dict ``x`` (a river record) is accepted too, converted on each call.

What cannot work here is refused when MOA builds the classifier (:func:`build`), with one line
naming the key: a class that is no classifier of classes (a regressor, a clusterer), also inside
a meta learner (``meta.OzaBag -l trees.FIMTDD``: the option ``-l`` is named), and MOA's
deep-learning learners (``deeplearning.MLP``: DJL's PyTorch engine, whose native library MOA
downloads from the network at the first prediction). A classifier MOA cannot prepare
(``meta.AutoML.AutoClass`` looks for a settings file of its author's machine), or that fails on
its first instances (:func:`check_learner`, what ``delaycv check`` runs), is one line too, with
MOA's message; so is a JVM out of heap (:func:`delaycv.jvm.machine.out_of_memory`).

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
from delaycv.common.words import did_you_mean
from delaycv.jvm import machine
from delaycv.protocol.moa_spec import EXPECTED, moa_label, moa_spec

#: P(1) of votes whose larger is class 1's by less than the division can tell (the float just
#: above 0.5): the order of the votes is kept, as MOA's maxIndex reads it
ABOVE_HALF = math.nextafter(0.5, 1.0)
#: the package of MOA's deep-learning learners (DJL on PyTorch, whose native library DJL
#: downloads at the first prediction): refused
DEEP_LEARNING = "moa.classifiers.deeplearning."

_java: dict[str, Any] = {}  # the Java classes, once the JVM runs
_headers: dict[tuple, Any] = {}  # the header of a feature list (shared by the folds' instances)
#: a categorical feature's values, from the stream: {feature: (value, ...)}
Categories = dict[str, tuple[str, ...]]


def vote_probability(v0: float, v1: float) -> tuple[float | None, bool]:
    """``(P(1), read_as_class)`` of MOA's votes ``v0``, ``v1`` for classes 0 and 1 (a vote not
    given is 0), the one rule of a MOA learner's P(1):

    - votes that are probabilities' weights (finite, not negative, summing to more than 0):
      ``v1 / (v0 + v1)``, one division, as MOA's evaluators normalise the votes
      (``BasicClassificationPerformanceEvaluator.getNormalizedProbability``), so that the scores
      rank as MOA's AUC ranks them; where ``v1 > v0`` by so little that the division gives 0.5,
      :data:`ABOVE_HALF`, so that the prediction is MOA's (``Utils.maxIndex``: class 1);
    - no votes, or all zero: None (no probability: the engine reads P(1) = 0.5, class 0, as
      ``maxIndex`` reads it);
    - votes that are no probabilities (a negative, infinite or NaN vote: HoeffdingTree's naive
      Bayes leaves give ``[inf, NaN]`` at times): the class of the first largest vote as 0 or 1,
      as MOA's evaluators read the prediction, and ``read_as_class`` True.

    >>> vote_probability(1.0, 3.0), vote_probability(0.0, 0.0), vote_probability(math.inf, math.nan)
    ((0.75, False), (None, False), (0.0, True))
    """
    total = v0 + v1
    if v0 >= 0 and v1 >= 0 and total < math.inf:  # (False for NaN)
        if not total > 0:
            return None, False
        p1 = v1 / total
        if v1 > v0 and not p1 > 0.5:  # a tie made by rounding: MOA reads class 1
            p1 = ABOVE_HALF
        return p1, False
    return (1.0 if v1 > v0 else 0.0), True


def java() -> dict[str, Any]:
    """The Java classes delaycv uses (the JVM started on first use)."""
    if not _java:
        machine.start()
        from jpype import JArray, JClass, JDouble

        _java.update(
            ClassOption=JClass("moa.options.ClassOption"),
            AbstractClassOption=JClass("moa.options.AbstractClassOption"),
            ListOption=JClass("com.github.javacliparser.ListOption"),
            OptionHandler=JClass("moa.options.OptionHandler"),
            Classifier=JClass("moa.classifiers.Classifier"),
            MultiClassClassifier=JClass("moa.classifiers.MultiClassClassifier"),
            Regressor=JClass("moa.classifiers.Regressor"),
            Attribute=JClass("com.yahoo.labs.samoa.instances.Attribute"),
            Instances=JClass("com.yahoo.labs.samoa.instances.Instances"),
            InstancesHeader=JClass("com.yahoo.labs.samoa.instances.InstancesHeader"),
            DenseInstance=JClass("com.yahoo.labs.samoa.instances.DenseInstance"),
            ArrayList=JClass("java.util.ArrayList"),
            Throwable=JClass("java.lang.Throwable"),
            doubles=JArray(JDouble),
        )
    return _java


def java_message(err: BaseException) -> str:
    """MOA's message: the first line of each exception of the chain, joined (the class's name
    where an exception has no message)."""
    parts: list[str] = []
    cause: Any = err
    while cause is not None and len(parts) < 6:
        get = getattr(cause, "getMessage", None)
        message = get() if callable(get) else str(cause)
        text = str(message).strip() if message is not None else ""
        if not text:
            get_class = getattr(cause, "getClass", None)
            text = str(get_class().getName()) if callable(get_class) else type(cause).__name__
        line = re.sub(r"^java\.lang\.\w+: ", "", text.splitlines()[0].strip()).rstrip(".")
        if line not in parts:
            parts.append(line)
        get_cause = getattr(cause, "getCause", None)
        cause = get_cause() if callable(get_cause) else None
    return ": ".join(parts)


def moa_failure(err: BaseException, what: str, where: str) -> ConfigError:
    """The one-line error of a Java exception ``err`` raised while MOA did ``what`` (``MOA
    cannot prepare 'x'``) for the learner at the key ``where``: the heap's error for an
    ``OutOfMemoryError``, else MOA's messages."""
    if machine.is_out_of_memory(err):
        return machine.out_of_memory()
    get_class = getattr(err, "getClass", None)
    kind = str(get_class().getSimpleName()) if callable(get_class) else type(err).__name__
    return ConfigError(
        f"{what}: {kind}: {java_message(err)}",
        location=f"key {where}",
        expected="a MOA classifier that runs here (delaycv check tries each on two instances)",
    )


def _is_java_exception(err: BaseException) -> bool:
    return bool(_java) and isinstance(err, _java["Throwable"])


def build(text: str, where: str = "learner"):
    """The MOA classifier of the command line ``text`` (untrained, not prepared), or a
    ConfigError at the key ``where`` with MOA's message: an unknown class or option, a malformed
    value, a class that is no classifier of classes (a regressor, a clusterer), here or as the
    learner of a meta learner's option, or one of MOA's deep-learning learners."""
    j = java()
    try:
        obj = j["ClassOption"].cliStringToObject(text, j["Classifier"], None)
    except Exception as err:
        message = java_message(err)
        raise ConfigError(
            f"MOA cannot build {text!r}: {message}{_class_hint(message)}",
            location=f"key {where}",
            expected=EXPECTED,
        ) from None
    _check_classifier(obj, text, where, None)
    return obj


def _class_hint(message: str) -> str:
    """`` (did you mean trees.HoeffdingTree?)`` for MOA's ``Class not found: trees.HoefdingTree``
    (the closest class of the jar's ``moa.classifiers``, as MOA's command lines name them), else
    ``""``."""
    found = re.search(r"Class not found: (\S+)", message)
    if found is None:
        return ""
    import zipfile

    from delaycv.jvm import jar

    prefix = "moa/classifiers/"
    try:
        with zipfile.ZipFile(jar.locate()) as archive:
            names = [
                n.removeprefix(prefix).removesuffix(".class").replace("/", ".")
                for n in archive.namelist()
                if n.startswith(prefix) and n.endswith(".class") and "$" not in n
            ]
    except (OSError, zipfile.BadZipFile, ConfigError):
        return ""
    return did_you_mean(found.group(1), names)


def _check_classifier(obj, text: str, where: str, option: str | None) -> None:
    """``obj`` (the classifier of ``text``, or the learner of its ``option``) classifies classes
    and is no deep-learning learner; so is every learner of its options, recursively."""
    j = _java
    name = str(obj.getClass().getName()).removeprefix("moa.classifiers.")
    of = f"in {text!r}, the option {option}" if option else repr(text)
    if not j["MultiClassClassifier"].class_.isInstance(obj):
        kind = "a regressor" if j["Regressor"].class_.isInstance(obj) else "a learner"
        raise ConfigError(
            f"{of} is {name}, {kind}, not a MOA classifier of classes: it cannot predict the "
            "stream's two classes",
            location=f"key {where}",
            expected=f"{EXPECTED}, whose learners are classifiers of classes too",
        )
    if name.startswith(DEEP_LEARNING.removeprefix("moa.classifiers.")):
        raise ConfigError(
            f"{of} is {name}, one of MOA's deep-learning learners, which delaycv does not run: "
            "DJL's PyTorch engine would download its native library from the network at the "
            "first prediction",
            location=f"key {where}",
            expected="a MOA classifier that needs no network (trees, bayes, functions, meta, ...)",
        )
    for inner, learner in _option_learners(obj):
        if j["Classifier"].class_.isInstance(learner):
            named = f"-{inner.getCLIChar()} ({inner.getName()}) of {name}"
            _check_classifier(learner, text, where, named)


def _option_learners(obj):
    """``(option, object)`` for each object an option of ``obj`` holds (class options, and the
    class options of list options), in the options' order."""
    j = _java
    if not j["OptionHandler"].class_.isInstance(obj):
        return
    for option in obj.getOptions().getOptionArray():
        held = [option]
        if isinstance(option, j["ListOption"]):
            held = list(option.getList())
        for item in held:
            if isinstance(item, j["AbstractClassOption"]):
                value = item.getPreMaterializedObject()
                if value is not None:
                    yield option, value


def header(features: tuple[str, ...], categories: Categories | None = None):
    """The MOA header of a stream with ``features`` and the class ``{0, 1}`` last: a feature of
    ``categories`` is a nominal attribute of its values, in their order, any other numeric."""
    categories = categories or {}
    key = (features, tuple((name, categories[name]) for name in features if name in categories))
    got = _headers.get(key)
    if got is None:
        j = java()

        def nominal(values) -> Any:
            out = j["ArrayList"]()
            for value in values:
                out.add(value)
            return out

        atts = j["ArrayList"]()
        for name in features:
            if name in categories:
                atts.add(j["Attribute"](name, nominal(categories[name])))
            else:
                atts.add(j["Attribute"](name))
        atts.add(j["Attribute"]("class", nominal(("0", "1"))))
        instances = j["Instances"]("delaycv", atts, 0)
        instances.setClassIndex(len(features))
        got = _headers[key] = j["InstancesHeader"](instances)
    return got


class MoaClassifier:
    """One fold's MOA classifier (see the module docstring). ``spec`` is any form
    :func:`~delaycv.protocol.moa_spec.moa_spec` reads; ``seed`` the fold's learner seed; ``where``
    the key of the spec, for errors. The JVM starts with the spec's heap (``own_heap=False``:
    with whatever heap the process's JVM has, as a check of many learners does)."""

    #: no trial run before an evaluation (delaycv.engine.probe_learner): MOA checked the command
    #: line when it built the classifier, and every vote is read (normalised, or as MOA reads it)
    needs_no_probe = True

    def __init__(
        self, spec: Any, seed: int | None = None, *, where: str = "learner", own_heap: bool = True
    ):
        spec = moa_spec(spec, where)
        machine.start(spec.get("heap") if own_heap else None, f"key {where}.heap")
        #: the normal form of the spec (delaycv.protocol.moa_spec reads it from this attribute)
        self.moa_spec = spec
        self.text = spec["moa"]
        model_key = f"{where}.moa" if where != "learner" else where
        self.where = model_key
        self.model = build(self.text, model_key)
        use = spec.get("seed", seed)
        try:
            if use is not None and self.model.isRandomizable():
                # a Java int: the fold's learner seed is a 32-bit unsigned draw
                self.model.setRandomSeed(int(((int(use) + 2**31) % 2**32) - 2**31))
            self.model.prepareForUse()
        except Exception as err:
            if not _is_java_exception(err):
                raise
            raise moa_failure(err, f"MOA cannot prepare {self.text!r}", model_key) from None
        self.features: tuple[str, ...] | None = None
        #: the values of the categorical features (:meth:`bind_features`) and their indices
        self.categories: Categories = {}
        self._codes: dict[str, dict[str, float]] = {}
        self.votes_as_class = 0  # votes that were no probabilities, read as the class MOA reads
        self._predict = self.model.getVotesForInstance
        self._train = self.model.trainOnInstance
        from delaycv.jvm import rows

        #: the Java fold loop (delaycv.jvm.rows), or None: the engine's loops call this object
        self.run_rows = rows.run_rows if rows.usable() else None
        #: what the folds' Java loops share of a chunk, made once before they run it in threads
        self.prepare_rows = rows.prepare_chunk if self.run_rows is not None else None

    @property
    def spec(self) -> dict:
        """The spec (the normal form)."""
        return self.moa_spec

    def __repr__(self) -> str:
        return f"MoaClassifier({self.text!r})"

    # ---------------------------------------------------------------- the stream's instances

    def bind_features(self, features, categories: Categories | None = None) -> None:
        """Fix the header to the stream's ``features`` and the values of its categorical ones
        (``categories``, :meth:`~delaycv.data.stream.Stream.categories`), before the first
        instance."""
        self.features = tuple(features)
        self.categories = {n: tuple(v) for n, v in (categories or {}).items() if n in features}
        self._codes = {
            n: {value: float(i) for i, value in enumerate(values)}
            for n, values in self.categories.items()
        }
        self.model.setModelContext(self._header())
        self.model.resetLearning()

    def _header(self):
        return header(self.features, self.categories)

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
        try:
            if self.run_rows is not None:  # one Java call for the chunk, no Python handles
                from delaycv.jvm import rows

                return rows.instances(self._header(), values)
            return self._python_instances(values)
        except Exception as err:
            if not _is_java_exception(err):
                raise
            raise moa_failure(err, "Java cannot make the stream's instances", self.where) from None

    def _matrix(self, records: list) -> np.ndarray:
        names, codes = self.features, self._codes
        rows = [[_number(x.get(name, math.nan), name, codes) for name in names] for x in records]
        return np.array(rows, dtype=np.float64).reshape(len(records), len(names))

    def _python_instances(self, values: np.ndarray) -> list:
        j = java()
        make, doubles, head = j["DenseInstance"], j["doubles"], self._header()
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
        try:
            votes = self._predict(self._instance(x))
        except Exception as err:
            if machine.is_out_of_memory(err):
                raise machine.out_of_memory() from None
            raise
        n = len(votes)
        p1, as_class = vote_probability(
            float(votes[0]) if n > 0 else 0.0, float(votes[1]) if n > 1 else 0.0
        )
        if p1 is None:
            return {}
        self.votes_as_class += as_class
        # 1 - p1 and p1 add up to 1.0 exactly (for p1 in [0, 1]), so p1 / sum is p1 itself
        return {0: 1.0 - p1, 1: p1}

    def learn_one(self, x, y: int, w: float = 1.0) -> None:
        if isinstance(x, dict):
            inst = self._instance(x, y)
        else:
            inst = x
            if w == 1 and inst.classValue() == y:
                self._learn(inst)
                return
            inst = inst.copy()
            inst.setClassValue(float(y))
        if w != 1:
            inst.setWeight(float(w))
        self._learn(inst)

    def _learn(self, inst) -> None:
        try:
            self._train(inst)
        except Exception as err:
            if machine.is_out_of_memory(err):
                raise machine.out_of_memory() from None
            raise


#: two instances on which a check lets a MOA learner predict and learn (features a and b)
TRIAL = (({"a": 0.0, "b": 1.0}, 0), ({"a": 1.0, "b": 0.5}, 1))


def check_learner(spec: Any, where: str = "learner") -> bool:
    """What ``delaycv check`` and the workflow's dry run ask of a MOA learner, in the JVM the
    process has, whatever its heap (a study's learners may each ask for their own, for their own
    jobs): MOA builds and prepares it (:class:`MoaClassifier`), then it predicts and learns the
    two instances of :data:`TRIAL`. A mistake, or a learner that fails, is one ConfigError at the
    key ``where``, with MOA's messages. Returns whether its runs depend on the run's seed: a
    randomisable classifier whose spec sets no ``seed`` of its own."""
    learner = MoaClassifier(spec, 0, where=where, own_heap=False)
    try:
        for x, y in TRIAL:
            learner.predict_proba_one(dict(x))
            learner.learn_one(dict(x), y)
    except Exception as err:
        if not _is_java_exception(err):
            raise
        raise moa_failure(
            err, f"MOA's {moa_label(learner.moa_spec)} fails on its first instances", learner.where
        ) from None
    return bool(learner.model.isRandomizable()) and "seed" not in learner.moa_spec


def _number(value, name: str, codes: dict[str, dict[str, float]]) -> float:
    """A feature's value as MOA holds it: a number, or a category's index among its values."""
    if isinstance(value, str):
        values = codes.get(name)
        if values is None or value not in values:
            raise ConfigError(
                f"feature {name!r} has the category {value!r}, which is none of the values "
                "the learner was told of for it",
                location="MOA learner",
                expected="categorical features of the stream the learner is evaluated on, whose "
                "values it is told before the first instance (bind_features)",
            )
        return values[value]
    return float(value)
