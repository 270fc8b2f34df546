"""The convert stage (delaycv.data): readers, mappings, conversion, the canonical stream."""
