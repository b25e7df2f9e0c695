"""The dashboard (a followed session) and ``check``, ``status`` and a fleet's rows (a session
loaded once, or followed) read the same bytes to the same steps.

TRL and ms-swift logs cut inside their last metric dict (a run killed mid-print, a paste) read
one step fewer, or "waiting for the first step…", on the dashboard than in ``check``: a one-shot
read parses the unclosed dict at the end as cut, while a follow held it for the wrapped rest of
the line that never came. A followed log that has gone quiet must read as the one-shot does.
"""

from __future__ import annotations

import asyncio
import shutil

import pytest

from tests.corpus import REPO
from tests.support import until
from tui.cli.check import judged
from tui.rules.rule_file import load_rules
from tui.session.run_session import RunSession
from tui.sources.local_file import LocalFile

LOGS = REPO / "tests" / "fixtures" / "logs"
CUT_DICTS = ["kin/trl_openr1257_grpo_dicts_cut.log", "kin/trl_rlswarm22_grpo_dicts_cut.log",
             "wild/trl3452_grpo_dicts_padded_blank_row_then_cut_dict.log",
             "wild/trl4086_grpo_vllm_sleep_deepspeed_timers_bar_3_of_1562_cut_dict.log",
             "generated/trl/grpo_finished.log", "generated/ddp/nccl_rank1_device_assert.log"]


@pytest.mark.parametrize("name", CUT_DICTS)
async def test_a_followed_log_reads_the_steps_a_one_shot_read_does(tmp_path, name):
    log = tmp_path / name.split("/")[-1]
    shutil.copy(LOGS / name, log)
    once = (await judged(str(log), None, False, load_rules())).model
    assert once.last_step is not None  # every one of these has a step to agree on
    session = RunSession(LocalFile(log, poll_seconds=0.05), watch_accelerators=False)
    await session.connect()
    following = asyncio.create_task(session.follow())
    try:
        await until(lambda: session.model.last_step == once.last_step
                    and session.model.step_count == once.step_count,
                    what=f"the {once.step_count} steps to {once.last_step} check reads")
    finally:
        following.cancel()
        await asyncio.gather(following, return_exceptions=True)
        await session.close()
