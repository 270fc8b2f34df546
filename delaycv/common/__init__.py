"""What every stage shares and nothing stage-specific: errors that name what is wrong
(:mod:`~delaycv.common.errors`), kinds of values (:mod:`~delaycv.common.checks`), the bounds of
size-like values (:mod:`~delaycv.common.bounds`), all-or-nothing
writes (:mod:`~delaycv.common.atomic`), Ctrl-C and SIGTERM as exceptions
(:mod:`~delaycv.common.interrupt`), the guarded compiled modules (:mod:`~delaycv.common.native`),
the names a user chooses among (:mod:`~delaycv.common.choices`) and the defaults of an evaluation
(:mod:`~delaycv.common.defaults`).

Imports: the standard library, numpy where a module needs it, and no other delaycv subpackage.
"""
