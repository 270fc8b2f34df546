"""What several test folders share: paths to the checkout and the shared datasets, the brute-force
loop, the engine-run shorthand, synthetic fold tables, Parquet corruption, workflow copies."""
