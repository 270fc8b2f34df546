"""Stage 1, data: raw files (ARFF, CSV) read (:mod:`~delaycv.data.readers`,
:mod:`~delaycv.data.arff`, :mod:`~delaycv.data.csv`), mapped onto the canonical stream
(:mod:`~delaycv.data.mapping`, :mod:`~delaycv.data.timeunits`), converted
(:mod:`~delaycv.data.convert`) and stored (:mod:`~delaycv.data.stream`); one identity per stream's
content (:mod:`~delaycv.data.identity`); the embedded synthetic stream
(:mod:`~delaycv.data.synthetic`).

Imports: :mod:`delaycv.common` only.
"""
