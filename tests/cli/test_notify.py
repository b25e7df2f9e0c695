"""The notifier on real channels: webhooks on 127.0.0.1 that refuse, then take, messages."""

from __future__ import annotations

import asyncio
import time

from tests.cli.test_watch import Webhook, _free_port
from tui.cli.notify import Notifier, channels, message
from tui.session.events import RunEvent


def crash(run: str = "cola") -> RunEvent:
    return RunEvent("critical", run, "gpu-1", 4, 12, "crashed: RuntimeError: boom (rank 1)", 0.0, "crash")


async def test_a_refused_message_is_tried_again_until_it_is_taken():
    hook = Webhook(refusals=2)
    said: list[str] = []
    notifier = Notifier(channels([hook.url]), burst_s=0.05, retry_s=(0.1, 0.1, 0.1), say=said.append)
    notifier.add([crash()])
    await asyncio.sleep(0.05)
    await notifier.close(wait_s=10)
    assert hook.received.get(timeout=1)["message"] == "cola on gpu-1, step 4/12: crashed: RuntimeError: boom (rank 1)"
    assert hook.refused == 2 and len(said) == 2
    assert all(line.startswith("notification to json://127.0.0.1") and "trying again in" in line for line in said)
    hook.close()


async def test_a_channel_that_never_takes_it_is_given_up_and_holds_back_no_other():
    good = Webhook()
    said: list[str] = []
    dead = f"json://127.0.0.1:{_free_port()}/hook"
    notifier = Notifier(channels([dead, good.url]), burst_s=0.05, retry_s=(0.2, 0.2), say=said.append)
    notifier.add([crash()])
    started = time.monotonic()
    await asyncio.to_thread(good.next, 5)
    assert time.monotonic() - started < 0.4  # not after the dead one's retries
    await notifier.close(wait_s=10)
    assert len(said) == 3 and said[-1].endswith("given up after 3 attempts: rlwatch: cola crashed")
    good.close()


def test_a_burst_is_one_message_naming_its_runs():
    assert message([crash("a"), crash("b"), crash("a")]) == (
        "rlwatch: 3 events from 2 runs",
        "\n".join(f"{run} on gpu-1, step 4/12: crashed: RuntimeError: boom (rank 1)" for run in "aba"))


def test_each_kind_of_event_has_a_title_that_says_what_happened():
    titles = [message([RunEvent(kind, "cola", "gpu-1", 4, 12, "…", 0.0, rule)])[0]
              for kind, rule in (("critical", "crash"), ("critical", "stalled"), ("critical", "nan"),
                                 ("explained", "crash"), ("warning", "kl"), ("moving", None),
                                 ("finished", None), ("reminder", "crash"))]
    assert titles == [
        "rlwatch: cola crashed", "rlwatch: cola stalled", "rlwatch: cola critical: nan",
        "rlwatch: cola crashed (its exception line)", "rlwatch: cola warning: kl",
        "rlwatch: cola moving again", "rlwatch: cola is over", "rlwatch: cola still critical"]
