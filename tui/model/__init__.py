"""One run's state: metric series, the step → byte-offset index, progress, incidents."""
