"""The figures stage (delaycv.figures)."""
