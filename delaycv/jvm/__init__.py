"""MOA's classifiers as delaycv learners, through a Java virtual machine in the process (JPype).

- :mod:`delaycv.jvm.jar`: the pinned MOA jar (MOA 2024.07, as PyPI's capymoa 0.15.1 wheel carries
  it): where it is looked for, its SHA-256, and ``python -m delaycv.jvm.jar install``;
- :mod:`delaycv.jvm.machine`: the JVM of the process (started once, on first use, with the jar
  and the heap asked for), and the errors of a machine without Java or JPype;
- :mod:`delaycv.jvm.learner`: :class:`~delaycv.jvm.learner.MoaClassifier`, a MOA classifier given
  by its MOA command-line string (read by :mod:`delaycv.protocol.moa_spec`), with the learner
  interface the fold loop calls (``predict_proba_one``, ``learn_one`` with a weight), the
  stream's instances as MOA instances, and what cannot work here refused in one line;
- :mod:`delaycv.jvm.rows`, :mod:`delaycv.jvm.build`: the Java fold loop (``java/``), which the
  engine hands its fold (the checkpoint and error hooks are the fold's);
- :mod:`delaycv.jvm.task`: MOA's own delayed cross-validation task on a delaycv stream.

Nothing here is imported unless a MOA learner is asked for (:mod:`delaycv.engine.learners`,
:mod:`delaycv.study.checks`): the default pipeline needs no Java. MOA is GPL-3.0; delaycv does
not ship it (the jar is downloaded from PyPI by the install command).

Imports: :mod:`delaycv.common`, :mod:`delaycv.protocol` (the MOA spec, the learner contract).
"""
