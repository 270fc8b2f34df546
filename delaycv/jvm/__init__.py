"""MOA's classifiers as delaycv learners, through a Java virtual machine in the process (JPype).

- :mod:`delaycv.jvm.jar`: the pinned MOA jar (MOA 2024.07, as PyPI's capymoa 0.15.1 wheel carries
  it): where it is looked for, its SHA-256, and ``python -m delaycv.jvm.jar install``;
- :mod:`delaycv.jvm.machine`: the JVM of the process (started once, on first use, with the jar
  and the heap asked for), and the errors of a machine without Java or JPype;
- :mod:`delaycv.jvm.learner`: :class:`~delaycv.jvm.learner.MoaClassifier`, a MOA classifier given
  by its MOA command-line string, with the learner interface the fold loop calls
  (``predict_proba_one``, ``learn_one`` with a weight), and the stream's instances as MOA
  instances (:meth:`~delaycv.jvm.learner.MoaClassifier.encode`).

Nothing here is imported unless a MOA learner is asked for: the default pipeline needs no Java.
MOA is GPL-3.0; delaycv does not ship it (the jar is downloaded from PyPI by the install command).

Imports: :mod:`delaycv.common`, :mod:`delaycv.protocol` (learner specs), :mod:`delaycv.engine` (the
fold loop's hooks, imported where used).
"""
