"""A Slurm job as a run: its state from ``scontrol``/``sacct`` on the login node, its output
file followed over the same SSH connection, its nodes reached through the login node."""
