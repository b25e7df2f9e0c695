"""What a job scheduler says about a job, one module per scheduler (Ray's Jobs API, Slurm),
each mapping its own words onto ``tui.parsers.records.JobRecord``."""
