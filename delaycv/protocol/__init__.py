"""What an evaluation run means, before any instance is read: label policies
(:mod:`~delaycv.protocol.policies`), waiting windows (:mod:`~delaycv.protocol.durations`), the
release schedule they give (:mod:`~delaycv.protocol.releases`), validation schemes and per-fold
random streams (:mod:`~delaycv.protocol.validation`), learner specs
(:mod:`~delaycv.protocol.learners`; a MOA learner's, read and checked without Java:
:mod:`~delaycv.protocol.moa_spec`), what the engine asks of a learner
(:mod:`~delaycv.protocol.learner_contract`), what a checkpoint value means
(:mod:`~delaycv.protocol.checkpoints`), the policies' waiting windows in order
(:mod:`~delaycv.protocol.policy_windows`) and the one funnel that checks a run's options
(:mod:`~delaycv.protocol.settings`).

Imports: :mod:`delaycv.common`, :mod:`delaycv.metrics` (the estimators a setting names).
"""
