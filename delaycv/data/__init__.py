"""Stage 1, data: raw files (ARFF, CSV) read (:mod:`~delaycv.data.readers`,
:mod:`~delaycv.data.arff`, :mod:`~delaycv.data.csv`), mapped (:mod:`~delaycv.data.mapping`,
:mod:`~delaycv.data.timeunits`) and converted (:mod:`~delaycv.data.convert`) into the canonical
stream (:mod:`~delaycv.data.stream`), stored as its Parquet file
(:mod:`~delaycv.data.stream_file`); one identity per stream's content
(:mod:`~delaycv.data.identity`); the embedded synthetic stream (:mod:`~delaycv.data.synthetic`).

Imports: :mod:`delaycv.common` only.
"""
