"""A one-run command over SSH: the box starts its work while rlwatch imports the rest.

A remote ``check`` waits on the network about a fifth of a second before its
log's first line comes: the login, then the box starting a session, a shell
and the backfill's grep. What only reads, judges and prints the run (the
session, the model, the rules: ~25 ms of imports here) need not be imported
before that wait; here the run's source is made and starts connecting (one
round trip opens the log and starts its backfill, ``tui.sources.ssh.remote_log``)
while a thread imports the command's module, so those imports fill the wait.
(What the connection itself needs, asyncssh and the parsers' needles, is
imported first: ~0.15 s, the bulk of a remote check's start.)
The command then reads the run on the same event loop, from the same source.

Also begun here, for any one-run command over SSH: asyncssh's search for
liboqs (``tui.sources.ssh.liboqs_lookup``). Neither is done for a fleet, whose
parse workers are forked before there is a second thread.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from tui.cli.targets import OpenedTarget

# Python hands the interpreter between threads this often while the command's module is
# imported (5 ms by default): each packet of the login waits for the importing thread's
# turn to end, and a dozen of them come meanwhile.
_SWITCH_S = 0.001

T = TypeVar("T")


def over_ssh(target: str) -> bool:
    """Whether ``target`` is read through an SSH login (a box, a Slurm login node, a Ray head)."""
    from tui.sources.ssh.target import parse_target

    return target.startswith(("slurm://", "ray://")) or parse_target(target) is not None


def look_for_liboqs_early(target: str) -> None:
    """A run read over SSH: asyncssh's import will wait on its search for liboqs; begin it."""
    if over_ssh(target):
        from tui.sources.ssh import liboqs_lookup

        liboqs_lookup.start()


@dataclass
class HeadStart:
    """A run's source made and connecting on ``loop``, the command's module imported."""

    loop: asyncio.AbstractEventLoop
    opened: OpenedTarget
    connecting: asyncio.Task[str | None]

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` on the loop the source connects on (``asyncio.run`` for a loop
        made before)."""
        return self.loop.run_until_complete(work)

    def close(self) -> None:
        """Close the source (nothing left to do once the command has) and the loop, as
        ``asyncio.run`` ends its own."""
        try:
            if not self.connecting.done():  # stopped first: it would start channels anew
                self.connecting.cancel()
                self.run(asyncio.wait({self.connecting}))
            self.run(self.opened.source.close())
        finally:
            _close(self.loop)


def _close(loop: asyncio.AbstractEventLoop) -> None:
    try:
        for _ in range(3):  # a task cancelled may leave another (asyncssh's, closing a channel)
            if not (tasks := asyncio.all_tasks(loop)):
                break
            for task in tasks:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        asyncio.set_event_loop(None)
        loop.close()


def begin(target: str, log: str | None, accept_new_host_key: bool, module: str) -> HeadStart | None:
    """Make ``target``'s source and start connecting it while ``module`` is imported; None for
    a target that is not a plain ``host:path`` (its command opens it the usual way), or one
    that cannot be opened (the command then says why, as ever)."""
    from tui.sources.ray.address import is_ray_target
    from tui.sources.ssh.target import parse_target

    if target.startswith("slurm://") or is_ray_target(target) or parse_target(target) is None:
        return None
    from tui.cli.targets import open_target
    from tui.sources.base import SourceError

    try:
        opened = open_target(target, log, accept_new_host_key)
    except SourceError:
        return None
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)  # as asyncio.run does, for whatever asks for "the" loop
    try:
        connecting = loop.run_until_complete(_connecting_while_importing(opened, module))
    except BaseException:
        _close(loop)
        raise
    return HeadStart(loop, opened, connecting)


async def _connecting_while_importing(opened: OpenedTarget, module: str) -> asyncio.Task[str | None]:
    connecting = asyncio.get_running_loop().create_task(opened.source.connect())
    # Its error is the command's to raise, where it awaits the task; if the command stops
    # before that (a broken rules file), the error has nobody to tell.
    connecting.add_done_callback(lambda task: task.cancelled() or task.exception())
    switch = sys.getswitchinterval()
    sys.setswitchinterval(_SWITCH_S)
    try:
        await asyncio.to_thread(importlib.import_module, module)
    finally:
        sys.setswitchinterval(switch)
    return connecting
