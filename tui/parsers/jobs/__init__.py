"""Schedulers' words on a job (Slurm's ``scontrol``/``sacct``, Ray's Jobs API) as ``JobRecord``s."""
