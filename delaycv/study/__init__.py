"""The study as the workflow runs it: its config (:mod:`~delaycv.study.config`), the code digests
that decide reruns (:mod:`~delaycv.study.digests`) and the report's pages
(:mod:`~delaycv.study.report`, :mod:`~delaycv.study.pages`).

Imports: any subpackage; no other subpackage imports this one.
"""
