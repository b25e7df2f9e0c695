"""Where a run stands, in one word: pending, running, stalled, crashed or finished.

This is the verdict users stake their runs on, so each word has one meaning:

* **crashed** — it stopped on a failure and did not go on after it (see
  :mod:`tui.rules.crash`), whatever else it printed, wandb's summary included;
  or its scheduler says the job failed or was stopped (a Slurm time limit or a
  lost node often prints nothing in the log);
* **finished** — its last step reached the total, its own progress bar counted
  every step (tqdm draws ``N/N`` only after the last one; OpenRLHF's ``Episode``
  bars carry no metrics to reach the total with), the trainer printed its
  own end (verl's final validation metrics, a trainer's end-of-training summary),
  or its scheduler says the job succeeded and the log shows no crash (a job
  script's exit status is often its last command's, not the trainer's);
* **pending** — its scheduler has not started the job yet;
* **stalled** — neither, and no new step for far longer than a step takes;
* **running** — none of these.
"""

from __future__ import annotations

from enum import Enum

from tui.model.run_model import RunModel
from tui.parsers.records import JobOutcome
from tui.rules.crash import judge_failures
from tui.rules.findings import Finding


class RunState(str, Enum):
    """The run's state; its value is the word printed and written to JSON."""

    PENDING = "pending"
    RUNNING = "running"
    STALLED = "stalled"
    CRASHED = "crashed"
    FINISHED = "finished"

    @property
    def over(self) -> bool:
        """A crashed or finished run prints no more steps (one with none says "no step",
        not that it waits for one)."""
        return self in (RunState.CRASHED, RunState.FINISHED)


def run_state(model: RunModel, findings: list[Finding]) -> RunState:
    """The state of ``model`` given the rules' ``findings`` (the stall rule's among them)."""
    judged = judge_failures(model)
    if judged.cause is not None and not judged.recurring:
        return RunState.CRASHED
    job = model.job.outcome if model.job is not None else None
    if job in (JobOutcome.FAILED, JobOutcome.STOPPED):
        return RunState.CRASHED
    if model.finished or job == JobOutcome.SUCCEEDED or _counted_every_step(model):
        return RunState.FINISHED
    if job == JobOutcome.PENDING:
        return RunState.PENDING
    if any(finding.rule == "stalled" for finding in findings):
        return RunState.STALLED
    return RunState.RUNNING


def _counted_every_step(model: RunModel) -> bool:
    """The run's own progress bar (not an evaluation's) stands at its total."""
    progress = model.progress
    return progress is not None and progress.total > 0 and progress.done >= progress.total
