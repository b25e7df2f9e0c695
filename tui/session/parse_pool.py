"""Parsing runs' backfills in worker processes, beside the event loop.

A fleet opens twenty runs at once. On one Python thread their backfills'
parse (1,120 step lines of ~50 metrics: ~25 ms a run) and fold queue behind
the SSH traffic, the first judging and the screen, while the client's other
cores idle. A ``ParsePool`` sends a batch (a remote grep's lines, or a big
chunk of a local log) with the run's scanner to a worker process, which scans
it, turns the step records into columns (``tui.model.step_columns``: typed
arrays, which pickle as bytes) and sends the scanner back with the records:
the scanner's state goes on to the next batch, and the event loop only
unpickles arrays and folds them in. A run's batches are scanned in order, one
at a time; different runs' go to the workers at once.

The workers are forks of this process made before it has a second thread
(``rlwatch A B …`` makes the pool first thing): copies, ready at once, with
nothing to import. A pool made later, when a fork could copy another
thread's held lock, gets its workers from a fork server instead (a fresh
interpreter that imports the parser, a few tenths of a second of another
core), started from a thread so that neither its start nor the first batch's
wait for it falls on the event loop. Workers ignore SIGINT: Ctrl-C is the
app's to handle, and whoever made the pool shuts it down (``close``), also
when the app ends with an exception.
"""

from __future__ import annotations

import asyncio
import ctypes
import gc
import multiprocessing
import os
import signal
import sys
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from tui.model.step_columns import StepColumns, step_columns
from tui.parsers.log_scanner import LogScanner
from tui.parsers.records import Record, StepRecord

# A remote grep's picked lines, each with its offset (``tui.sources.base.Lines``),
# or bytes of the log as they come.
Batch = bytes | list[tuple[int, bytes]]
Scanned = list[Record | StepColumns]

# More workers than this would wait on the event loop that feeds them: twenty runs'
# batches come through one asyncssh connection per host.
_MOST_WORKERS = 4
# prctl(2): the signal a process gets when the thread that made it ends.
_PR_SET_PDEATHSIG = 1


def worker_count() -> int:
    """A worker per core this process may use (at most ``_MOST_WORKERS``). The event loop
    keeps no core of its own: through a fleet's opening it mostly waits on the workers
    (2026-11-28, rlwatch on two cores of a 16-core Xeon server: its loop idle two fifths of the
    opening with one worker; with two, the opening 0.84× as long)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(_MOST_WORKERS, cores))


def scan_batch(scanner: LogScanner, batch: Batch) -> tuple[LogScanner, Scanned]:
    """``batch`` through ``scanner``: the scanner (now past it) and the records, the step
    records as one ``StepColumns`` after the others (the model folds steps last anyway)."""
    if isinstance(batch, bytes):
        records = scanner.feed(batch)
    else:
        records = [record for offset, line in batch for record in scanner.scan_line(line, offset)]
    steps = [record for record in records if isinstance(record, StepRecord)]
    if not steps:
        return scanner, list(records)
    others: Scanned = [record for record in records if not isinstance(record, StepRecord)]
    return scanner, [*others, step_columns(steps)]


def _worker_start() -> None:
    """Ignore Ctrl-C (the app's to handle), end on SIGTERM, and, on Linux, end when the process that made
    this worker does: a worker blocked on its queue would otherwise outlive an rlwatch
    killed with SIGKILL (a fork holds the queue's other end itself, so it never sees EOF).
    The heap a fork inherits (Textual, asyncssh, the app) is frozen out of the garbage
    collector's reach: its full collections would walk it, and touching it copies its pages
    (20 scans of a 1,120-step run: 0.92× the worker's CPU, 0.6× its page faults)."""
    gc.freeze()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A fork inherits the parent's handlers: the headless watcher's asyncio one for SIGTERM
    # only wakes a loop the worker does not run, and would swallow the signal below.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _ready() -> None:
    """A worker's first task: nothing, so that it is started before a batch needs it."""


class ParsePool:
    """Worker processes that scan runs' batches; ``scan`` is awaited by each run's feed."""

    def __init__(self, workers: int | None = None, start_method: str | None = None) -> None:
        """``start_method``: "fork" or "forkserver"; None: fork while this process has one
        thread, else a fork server."""
        if start_method is None:
            start_method = "fork" if threading.active_count() == 1 else "forkserver"
        context = multiprocessing.get_context(start_method)
        if start_method == "forkserver":
            context.set_forkserver_preload([__name__])
        self.start_method = start_method
        self.workers = workers or worker_count()
        self._executor = ProcessPoolExecutor(self.workers, mp_context=context,
                                             initializer=_worker_start)
        self._starting: threading.Thread | None = None
        self._in_threads = False  # the workers lost or retired: batches are scanned in a thread

    def start(self) -> None:
        """Start the workers now, while the app starts and the runs connect: forked here, at
        once (before the executor's own thread starts), or from a fork server, which a
        thread waits for."""
        if self.start_method == "fork":
            self._executor.submit(_ready)  # a fork pool forks all its workers at its first task
            return
        self._starting = threading.Thread(target=self._start_workers, name="parse-pool-start")
        self._starting.start()

    def _start_workers(self) -> None:
        try:
            for done in [self._executor.submit(_ready) for _ in range(self.workers)]:
                done.result()
        except (RuntimeError, BrokenProcessPool):
            pass  # closed while starting, or a worker could not start: ``scan`` says which

    async def scan(self, scanner: LogScanner, batch: Batch) -> tuple[LogScanner, Scanned]:
        """``scan_batch`` in a worker. A pool that lost a worker (killed by the
        out-of-memory killer, say) can take no more work: the batch is scanned in a thread
        here instead, from the scanner as it was, and so are the ones after it."""
        if not self._in_threads:
            try:
                return await asyncio.wrap_future(self._executor.submit(scan_batch, scanner, batch))
            except BrokenProcessPool:
                self._in_threads = True
        return await asyncio.to_thread(scan_batch, scanner, batch)

    def retire(self) -> None:
        """Let the workers go, and the memory they hold with them (the headless watcher, once
        every run has been read to its end: what it follows then comes a few lines at a time,
        scanned where it arrives). A big batch that still comes (a log replaced, read again
        from its start) is scanned in a thread, as after a lost worker. The batches already
        given to the workers are finished."""
        if self._in_threads:
            return
        self._in_threads = True
        if self._starting is not None:
            self._starting.join()
        self._executor.shutdown(wait=False)

    def close(self) -> None:
        """Stop the workers and the fork server and wait for them (they are idle or
        finishing one batch: milliseconds); batches not started are dropped."""
        if self._starting is not None:
            self._starting.join()
        self._executor.shutdown(wait=True, cancel_futures=True)
