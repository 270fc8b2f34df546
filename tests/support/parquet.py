"""A damaged Parquet file, as a bad disk or a bad copy would leave it."""

from __future__ import annotations

from pathlib import Path


def flip_page_byte(path: Path, column: str, row_group: int = 0) -> int:
    """Flip one bit in the middle of the data of ``column``'s chunk in a Parquet file (inside a
    data page: past the page header), as a bad disk or a bad copy would; return the offset."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    group = meta.row_group(row_group)
    names = [group.column(i).path_in_schema for i in range(group.num_columns)]
    chunk = group.column(names.index(column))
    begin = chunk.data_page_offset
    if chunk.has_dictionary_page and chunk.dictionary_page_offset is not None:
        begin = min(begin, chunk.dictionary_page_offset)
    end = begin + chunk.total_compressed_size  # the data page(s) run from data_page_offset to end
    offset = chunk.data_page_offset + 2 * (end - chunk.data_page_offset) // 3
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))
    return offset
