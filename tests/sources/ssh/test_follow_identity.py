"""A remote follow knows which file it follows: a log replaced or rewritten is read anew.

A run restarted into the same log name (``mv run.log run.log.1`` and a new ``run.log``, or a
``>`` redirect that empties it and writes past where rlwatch had read) must not be merged
into the old run: the steps are the new file's alone, and the user is told, in the same words
as for a local log.
"""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from tests.sshd import processes_mentioning
from tests.support import following, until
from tui.model.run_model import RunModel
from tui.parsers.log_scanner import NEEDLES
from tui.session.feed import Feed
from tui.sources.base import Lines, Reset, Status
from tui.sources.ssh.remote_log import RemoteLog
from tui.sources.ssh.target import RemoteTarget

LINE = "step:{0} - critic/score/mean:{1} - actor/kl_loss:{2} - timing_s/step:2.0\n"


def lines(steps: range, score: float = 0.5, kl: float = 0.01) -> str:
    return "".join(f"reward chatter for step {step}\n" + LINE.format(step, score, kl) for step in steps)


def steps_and_scores(model) -> list[tuple[int, float]]:
    series = model.series["critic/score/mean"]
    return list(zip(series.steps, series.values))


async def tail_running(log) -> None:
    """Until the box's ``tail -F`` follows ``log`` (a change made before it starts is the next
    follower's to see, not its own), and a moment for it to set up its watch."""
    await until(lambda: any(" -F " in line for line in processes_mentioning(str(log))), 10, "tail")
    await asyncio.sleep(0.5)


def rewrite(log, text: str) -> None:
    """Empty the log and write ``text`` in one go (``>`` in a shell, ``open(…, "w")``)."""
    with open(log, "w") as handle:
        handle.write(text)


async def followed_through(log, before: int, change, last_step: int, box=None
                           ) -> tuple[RunModel, list[str]]:
    """The model of a followed ``log`` (its last step ``before``) that ``change(events)`` changed,
    once it reached ``last_step``, and the notices it gave; with ``box`` (its sshd), changed
    while the connection was down."""
    events: list[Status | Reset] = []
    async with following(log, events.append) as model:
        await until(lambda: model.last_step == before, 10)
        if box is None:
            await tail_running(log)
        else:
            for pid in box.session_pids():  # the box's side of our connection dies
                os.kill(pid, signal.SIGKILL)
        await change(events)
        await until(lambda: model.last_step == last_step, 20, "the new run's steps")
        await asyncio.sleep(1.0)  # nothing of the old file comes after
        return model, [event.reason for event in events if isinstance(event, Reset)]


@pytest.mark.parametrize("connected", [True, False])
async def test_a_replaced_remote_log_is_read_anew_with_the_local_notice(client_home, ssh_world, tmp_path,
                                                                        connected):
    log = tmp_path / "run.log"
    log.write_text(lines(range(1, 9)))
    new_steps = range(1, 3) if connected else range(1, 12)  # shorter, or longer than the old one

    async def replace(_) -> None:
        os.rename(log, tmp_path / "run.log.1")
        log.write_text(lines(new_steps, score=0.9, kl=0.5))

    model, resets = await followed_through(log, 8, replace, new_steps[-1],
                                           None if connected else ssh_world[1])
    assert steps_and_scores(model) == [(step, 0.9) for step in new_steps]
    assert list(model.series["actor/kl_loss"].values) == [0.5] * len(new_steps)
    assert resets == [f"gpu:{log} was replaced; reading the new file from the start"]


async def test_a_log_emptied_and_rewritten_longer_while_followed_is_read_from_the_start(client_home, tmp_path):
    """A run restarted with ``>`` into its log: tail's notice of the emptied file comes before
    the new run writes past the old size (its start-up takes seconds), and the follower that
    reads the new file is a new one, from 0: none of the new run's bytes is taken for the old
    file's, whatever order tail's notice and its bytes arrive in."""
    log = tmp_path / "run.log"
    log.write_text(lines(range(1, 4)))

    async def restart(events) -> None:
        rewrite(log, "")
        await until(lambda: any(isinstance(event, Reset) for event in events), 10, "tail's notice")
        rewrite(log, lines(range(50, 54), score=0.7))  # past the old size in one write

    model, resets = await followed_through(log, 3, restart, 53)
    assert steps_and_scores(model) == [(step, 0.7) for step in range(50, 54)]
    assert resets == [f"gpu:{log} was truncated; reading it again from the start"]


async def test_a_log_rewritten_longer_while_disconnected_is_read_from_the_start(client_home, ssh_world,
                                                                                tmp_path):
    """The issue's case: emptied, then steps 50–51 and later 52–53, longer than before; the
    follower resumed at its old offset and showed {1, 2, 3, 52, 53}."""
    log = tmp_path / "run.log"
    log.write_text(lines(range(1, 4)))

    async def rewrite_longer(_) -> None:
        rewrite(log, "")
        rewrite(log, lines(range(50, 52), score=0.7))
        with open(log, "a") as handle:
            handle.write(lines(range(52, 54), score=0.7))

    model, resets = await followed_through(log, 3, rewrite_longer, 53, ssh_world[1])
    assert steps_and_scores(model) == [(step, 0.7) for step in range(50, 54)]
    assert resets == [f"gpu:{log} was truncated; reading it again from the start"]


class ReplacedAtFirstLines:
    """A real RemoteLog whose box kills our SSH sessions as soon as the backfill's first lines
    arrive, and whose log is then replaced: the backfill resumes on another file."""

    def __init__(self, source: RemoteLog, sshd, replace) -> None:
        self.source, self.sshd, self.replace = source, sshd, replace
        self.label = source.label

    async def stream(self, start: int, follow: bool):
        cut = False
        async for event in self.source.stream(start, follow):
            if not cut and isinstance(event, Lines) and event.lines:
                cut = True
                for pid in self.sshd.session_pids():
                    os.kill(pid, signal.SIGKILL)
                self.replace()
            yield event


async def test_a_log_replaced_while_a_dropped_backfill_waits_is_read_anew(client_home, ssh_world,
                                                                          tmp_path):
    log = tmp_path / "run.log"
    # ~9 MB of matched lines: more than SSH's flow-control window, so most are still on the box.
    log.write_text("".join(f"step:{step} - critic/score/mean:0.5 - {'x/pad:1 - ' * 100}z:1\n"
                           for step in range(1, 8001)))

    def replace() -> None:
        os.rename(log, tmp_path / "run.log.1")
        log.write_text(lines(range(1, 6), score=0.9))

    events: list[Status | Reset] = []
    cut = ReplacedAtFirstLines(RemoteLog(RemoteTarget("gpu", str(log)), NEEDLES), ssh_world[1], replace)
    await cut.source.connect()
    model = RunModel()
    task = asyncio.create_task(Feed(cut, model, on_status=events.append).run(follow=True))
    try:
        await until(lambda: any(isinstance(event, Reset) for event in events), 30, "the notice")
        await until(lambda: model.last_step == 5, 15, "the new run's steps")
        await asyncio.sleep(1.0)
        assert steps_and_scores(model) == [(step, 0.9) for step in range(1, 6)]
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await cut.source.close()
    resets = [event.reason for event in events if isinstance(event, Reset)]
    assert resets == [f"gpu:{log} was replaced; reading the new file from the start"]
