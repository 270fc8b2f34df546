"""The Snakemake workflow: its DAG and reruns, a real run, conda envs, SLURM, rule scripts' jobs."""
