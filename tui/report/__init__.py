"""The end-of-run report: the seed checklist's verdict on a finished (or running) run."""
