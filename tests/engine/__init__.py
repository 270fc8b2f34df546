"""The evaluate stage's loop (delaycv.engine): hand-worked runs, the brute-force loop, the
compiled loop, chunked reading, progress, checks of windows and learners."""
