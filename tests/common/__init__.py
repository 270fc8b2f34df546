"""delaycv.common: errors, atomic writes, windows, the defaults."""
