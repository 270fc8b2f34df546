"""What every stage shares and nothing stage-specific: errors that name what is wrong
(:mod:`~delaycv.common.errors`), kinds of values (:mod:`~delaycv.common.checks`), the bounds of
size-like values (:mod:`~delaycv.common.bounds`), all-or-nothing
writes (:mod:`~delaycv.common.atomic`), Ctrl-C and SIGTERM as exceptions
(:mod:`~delaycv.common.interrupt`), the guarded compiled modules (:mod:`~delaycv.common.native`),
the names a user chooses among (:mod:`~delaycv.common.choices`), the defaults of every stage
(:mod:`~delaycv.common.defaults`), settings as plain data (:mod:`~delaycv.common.records`) and the
user's cache folder (:mod:`~delaycv.common.cache`).

Imports: the standard library, numpy where a module needs it, and no other delaycv subpackage.
"""
