"""The last step's Log tab of a run that crashed goes on to the crash.

The crash happened while the next step ran, a step that never printed its
line: the text after the last step line (here a real run's first 12 steps,
then a line of chatter, then corpus 018's CUDA OOM traceback) is shown under
the step's own text, the block read as the failure view reads it.
"""

from __future__ import annotations

from pathlib import Path

from tests.corpus import verl_log
from tests.support import first_steps, text_of
from tests.ui.test_dashboard import open_app, wait_for
from tui.ui.screens.step_detail import StepDetailScreen
from tui.ui.widgets.failure_text import FailureText
from tui.ui.widgets.step_log import StepLog

OOM = verl_log("018")
CHATTER = b"(TaskRunner pid=7) Training Progress:  30%|###       | 12/40 [20:00<46:40, 100.0s/it]\n"


def log_text(log: StepLog) -> str:
    return "\n".join(text_of(widget) for widget in log.query("Static"))


async def test_the_last_steps_log_goes_on_to_the_crash_and_no_other_step_does(tmp_path: Path) -> None:
    log = first_steps(tmp_path, 12)
    with log.open("ab") as out:
        out.write(CHATTER + OOM.read_bytes())
    app = open_app(log)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: any(f.rule == "crash" for f in app.findings), "the crash", timeout=15)
        await pilot.press("g", *"12", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, StepDetailScreen) and app.screen.step == 12,
                       "the last step")
        await pilot.press("l")
        step_log = app.screen.query_one(StepLog)
        await wait_for(pilot, lambda: step_log.query(FailureText) and step_log.query_one(FailureText).has_exception,
                       "the crash's block", timeout=15)
        text = log_text(step_log)
        assert "then the crash after this step" in text
        assert "step:12 - " in text  # the step's own text first
        crash_offset = next(f.offset for f in app.findings if f.rule == "crash")
        assert f"up to the crash at byte {crash_offset:,}" in text
        assert "Training Progress:  30%" in text  # what came between the step line and the crash
        exception = text_of(step_log.query_one("#failure-exception"))
        assert exception.lstrip().startswith("▶ torch.OutOfMemoryError: CUDA out of memory")
        # The step before: its own text only.
        await pilot.press("left_square_bracket")
        await wait_for(pilot, lambda: app.screen.step == 11 and "step:11 - " in log_text(step_log), "step 11")
        assert not step_log.query(FailureText) and "crash" not in log_text(step_log)
