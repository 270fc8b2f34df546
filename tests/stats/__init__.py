"""The compare and rankings stages' statistics (delaycv.stats)."""
