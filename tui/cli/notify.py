"""Sending the watcher's events to people, through Apprise URLs (``--notify``, ``notify = [...]``).

Apprise speaks Slack, Discord, Telegram, ntfy, e-mail, Lark/Feishu, DingTalk,
WeCom, Microsoft Teams, a plain JSON webhook and a hundred more from one URL
syntax, so rlwatch writes none of them. What rlwatch decides is when and what:

* a burst of events (a fleet where two runs fail in the same second, a
  restart reading twenty runs) goes as one message, gathered for BURST_S;
* the text is short and plain: one line per event (run, host, step/total,
  what happened), log text only in its neutralised form;
* a channel that fails is tried again with growing pauses (RETRY_S), each
  failure said in one line on stderr; it never stops the watching, and one
  failing channel never holds back the others.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tui.durations import word_duration
from tui.parsers.text import safe_text
from tui.session.events import RunEvent, critical_events
from tui.session.run_session import RunSession

if TYPE_CHECKING:  # Apprise is imported once a URL is given (tui.cli.apprise_service says why)
    import apprise

# Events this close together go as one message: two runs of a fleet failing in the same
# second are told in one. Short, as a crash is to be told within 5 s of its last line
# (tui.session.events.BLOCK_WAIT_S is the rest of that).
BURST_S = 1.5
# Pauses before each new attempt at a message a channel refused; then it is given up.
RETRY_S = (5.0, 30.0, 120.0, 600.0)


class NotifyUrlError(ValueError):
    """A URL Apprise does not understand."""


@dataclass(frozen=True, slots=True)
class Channel:
    """One Apprise URL, sent to on its own (so its failures and retries are its own)."""

    apprise: apprise.Apprise
    # The URL with its secrets hidden (Apprise's privacy form), for messages on stderr.
    shown: str


def channels(urls: Sequence[str]) -> list[Channel]:
    """One Channel per URL (a value holding several, split as Apprise splits it, is several);
    NotifyUrlError naming the first URL Apprise cannot use. Apprise is not imported when
    there is none, and only the plugins of the URLs given are loaded."""
    if not urls:
        return []
    import apprise

    from tui.cli.apprise_service import UnusableUrl, service
    from tui.cli.apprise_service import urls as split

    made = []
    for given in urls:
        for url in split(given) or [given]:
            try:
                made_service = service(url)
            except UnusableUrl as why:
                scheme = url.split("://", 1)[0] if "://" in url else url[:20]
                raise NotifyUrlError(f"--notify: {why}: {safe_text(scheme)}://…") from None
            one = apprise.Apprise()
            one.add(made_service)
            made.append(Channel(one, safe_text(made_service.url(privacy=True))))
    return made


def message(events: Sequence[RunEvent]) -> tuple[str, str]:
    """The title and body of one message for ``events`` (one line each, as printed)."""
    if len(events) == 1:
        event = events[0]
        title = f"rlwatch: {event.run} {_headline(event)}"
    else:
        runs = list(dict.fromkeys(event.run for event in events))
        title = f"rlwatch: {len(events)} events from {len(runs)} run{'s' if len(runs) > 1 else ''}"
    return title, "\n".join(event.line() for event in events)


def _headline(event: RunEvent) -> str:
    if event.kind == "critical":
        return {"crash": "crashed", "stalled": "stalled"}.get(event.rule or "", f"critical: {event.rule}")
    return {"warning": f"warning: {event.rule}", "moving": "moving again", "finished": "is over",
            "reminder": "still critical", "explained": "crashed (its exception line)"}[event.kind]


def _say(text: str) -> None:
    print(f"rlwatch: {text}", file=sys.stderr, flush=True)


class Notifier:
    """Gathers events into messages and sends each to every channel, retrying failures."""

    def __init__(self, channels: Sequence[Channel], burst_s: float = BURST_S,
                 retry_s: tuple[float, ...] = RETRY_S, say: Callable[[str], None] = _say) -> None:
        self._channels = list(channels)
        self._burst_s = burst_s
        self._retry_s = retry_s
        self._say = say
        self._pending: list[RunEvent] = []
        self._gathering: asyncio.Task[None] | None = None
        self._sending: set[asyncio.Task[None]] = set()

    def add(self, events: Sequence[RunEvent]) -> None:
        """Send ``events`` in the next message (which leaves BURST_S after the first of them)."""
        if not self._channels or not events:
            return
        self._pending.extend(events)
        if self._gathering is None:
            self._gathering = asyncio.get_running_loop().create_task(self._gather())

    async def _gather(self) -> None:
        await asyncio.sleep(self._burst_s)
        self._send_pending()

    def _send_pending(self) -> None:
        self._gathering = None
        if not self._pending:
            return
        title, body = message(self._pending)
        self._pending = []
        for channel in self._channels:
            task = asyncio.get_running_loop().create_task(self._send(channel, title, body))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def _send(self, channel: Channel, title: str, body: str) -> None:
        for attempt in range(len(self._retry_s) + 1):
            why = await self._try(channel, title, body)
            if why is None:
                return
            if attempt == len(self._retry_s):
                self._say(f"notification to {channel.shown} failed ({why}); given up after "
                          f"{attempt + 1} attempts: {title}")
                return
            pause = self._retry_s[attempt]
            self._say(f"notification to {channel.shown} failed ({why}); trying again in {word_duration(pause)}")
            await asyncio.sleep(pause)

    @staticmethod
    async def _try(channel: Channel, title: str, body: str) -> str | None:
        """One attempt; why it failed, or None."""
        import apprise

        try:
            result = await channel.apprise.async_notify(body=body, title=title,
                                                         body_format=apprise.NotifyFormat.TEXT)
        except Exception as error:  # a plugin's bug must not end the watching
            return safe_text(f"{type(error).__name__}: {error}")[:200]
        if result:
            return None
        said = [entry.message for entry in result.logs() if entry.message]
        return safe_text(said[-1])[:200] if said else "refused"

    async def close(self, wait_s: float = 10.0) -> None:
        """Send what is gathered now and give the messages under way ``wait_s`` to leave."""
        if self._gathering is not None:
            self._gathering.cancel()
            self._send_pending()
        if self._sending:
            _, late = await asyncio.wait(set(self._sending), timeout=wait_s)
            for task in late:
                task.cancel()


def notify_criticals(notifier: Notifier, run: str, host: str, session: RunSession) -> None:
    """Send the critical findings a screen announces on ``session`` (the dashboard's and the
    fleet's ``--notify``: told once while the screen is open, as its bell rings)."""
    session.listen_criticals(lambda fresh: notifier.add(
        critical_events(run, host, session.model, fresh, time.time())))
