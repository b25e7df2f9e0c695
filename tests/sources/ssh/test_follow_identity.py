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

from tests.sshd import processes_mentioning
from tests.support import following, until
from tui.sources.base import Reset, Status

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


async def test_a_replaced_remote_log_is_read_anew_with_the_local_notice(client_home, tmp_path):
    log = tmp_path / "run.log"
    log.write_text(lines(range(1, 9)))
    events: list[Status | Reset] = []
    async with following(log, events.append) as model:
        await until(lambda: model.last_step == 8, 10)
        await tail_running(log)
        os.rename(log, tmp_path / "run.log.1")
        log.write_text(lines(range(1, 3), score=0.9, kl=0.5))
        await until(lambda: model.step_count == 2 and model.last_step == 2, 15, "the new run's two steps")
        await asyncio.sleep(1.5)  # nothing of the old file comes after
        assert steps_and_scores(model) == [(1, 0.9), (2, 0.9)]
        assert list(model.series["actor/kl_loss"].values) == [0.5, 0.5]
    resets = [event.reason for event in events if isinstance(event, Reset)]
    assert resets == [f"gpu:{log} was replaced; reading the new file from the start"]


async def test_a_log_emptied_and_rewritten_longer_while_followed_is_read_from_the_start(client_home, tmp_path):
    """A run restarted with ``>`` into its log: tail's notice of the emptied file comes before
    the new run writes past the old size (its start-up takes seconds), and the follower that
    reads the new file is a new one, from 0: none of the new run's bytes is taken for the old
    file's, whatever order tail's notice and its bytes arrive in."""
    log = tmp_path / "run.log"
    log.write_text(lines(range(1, 4)))
    events: list[Status | Reset] = []
    async with following(log, events.append) as model:
        await until(lambda: model.last_step == 3, 10)
        await tail_running(log)
        rewrite(log, "")
        await until(lambda: any(isinstance(event, Reset) for event in events), 10, "tail's notice")
        rewrite(log, lines(range(50, 54), score=0.7))  # past the old size in one write
        await until(lambda: model.last_step == 53, 15, "the new run's steps")
        await asyncio.sleep(1.5)
        assert steps_and_scores(model) == [(step, 0.7) for step in range(50, 54)]
    resets = [event.reason for event in events if isinstance(event, Reset)]
    assert resets == [f"gpu:{log} was truncated; reading it again from the start"]


async def after_a_drop(gpu, log, before: int, change, last_step: int
                      ) -> tuple[list[tuple[int, float]], list[str]]:
    """The steps (and scores) of a followed ``log`` (its last step ``before``) that ``change()``
    changed while the connection was down, once the follower reached ``last_step``; and the
    notices it gave."""
    events: list[Status | Reset] = []
    async with following(log, events.append) as model:
        await until(lambda: model.last_step == before, 10)
        for pid in gpu.session_pids():  # the box's side of our connection dies
            os.kill(pid, signal.SIGKILL)
        change()
        await until(lambda: model.last_step == last_step, 20, "the new run's steps")
        await asyncio.sleep(1.0)
        return steps_and_scores(model), [event.reason for event in events if isinstance(event, Reset)]


async def test_a_log_replaced_while_disconnected_is_read_anew(client_home, ssh_world, tmp_path):
    log = tmp_path / "run.log"
    log.write_text(lines(range(1, 9)))

    def replace() -> None:
        os.rename(log, tmp_path / "run.log.1")
        log.write_text(lines(range(1, 12), score=0.9))  # longer than the old one

    steps, resets = await after_a_drop(ssh_world[1], log, 8, replace, 11)
    assert steps == [(step, 0.9) for step in range(1, 12)]
    assert resets == [f"gpu:{log} was replaced; reading the new file from the start"]


async def test_a_log_rewritten_longer_while_disconnected_is_read_from_the_start(client_home, ssh_world,
                                                                                tmp_path):
    """The issue's case: emptied, then steps 50–51 and later 52–53, longer than before; the
    follower resumed at its old offset and showed {1, 2, 3, 52, 53}."""
    log = tmp_path / "run.log"
    log.write_text(lines(range(1, 4)))

    def rewrite_longer() -> None:
        rewrite(log, "")
        rewrite(log, lines(range(50, 52), score=0.7))
        with open(log, "a") as handle:
            handle.write(lines(range(52, 54), score=0.7))

    steps, resets = await after_a_drop(ssh_world[1], log, 3, rewrite_longer, 53)
    assert steps == [(step, 0.7) for step in range(50, 54)]
    assert resets == [f"gpu:{log} was truncated; reading it again from the start"]
