"""Letting ``grep`` pick out the interesting lines of a big log.

``grep -a -b`` with the scanner's fixed strings reads a file several times
faster than Python can look for the same strings; its output is
``OFFSET:LINE`` per match, which is all the scanner needs. The same command
runs locally (where Hyperscan is missing) and, over SSH, on the training box.
The strings go to grep as one extended regular expression of escaped
alternatives rather than as ``-F`` patterns: GNU grep reads the same dozens of
literals with less CPU that way (the parts below: a quarter less on seed 001's
chatter, a twentieth on bench/make_log.py's log), and the box's CPU is what a
remote backfill waits for.
"""

from __future__ import annotations

import asyncio
import re
import shlex
from collections.abc import AsyncIterator, Awaitable, Sequence

# A piece's grep output is read in chunks of this size.
_READ_BYTES = 1 << 20
# How many batches (each from one chunk) a piece's queue holds before its reader waits: a later
# piece is read only once those before it are, so a million-step log's later pieces would
# otherwise be held whole in memory meanwhile. A reader that waits stops reading its grep's
# pipe, and grep stops there: the piece's lines stay in the file until they are wanted.
QUEUED_BATCHES = 8
# Asks dd whether it can skip and count bytes (GNU coreutils, recent BusyBox):
# without that, a log is grepped in one piece.
DD_CAN_CUT = "dd if=/dev/null of=/dev/null bs=1M skip=0 count=0 iflag=skip_bytes,count_bytes 2>/dev/null"


# What the box's grep looks for instead of each of the scanner's needles: a part of it,
# chosen by bench/needle_forms.py for what GNU grep spends on it. grep's search for many
# strings (an extended expression of literal alternatives: a DFA) runs a fast loop while
# the text matches no prefix of any string and a slow one from each byte that starts one,
# so a set costs how often the text holds a prefix of one of its strings, and strings that
# start alike share that cost: ``s dead because`` shares the ``s`` of ``step:``, which
# must be looked for anyway, where ``because`` stops at every "about" of the chatter.
# The scanner checks whole needles on the lines grep picks, so a part's chance matches
# cost only the bytes of their lines. A needle missing here is looked for whole.
# Measured when chosen (2026-11-27, aa6b485, a 2-CPU AMD EPYC VM shared with other jobs, `python bench/needle_forms.py
# --logs DIR`, grep CPU seconds per GiB, the parts chosen by first-byte rank before → these):
# seed 001's chatter 1.38 → 1.11, bench/make_log.py's 0.99 → 0.82, the corpus 0.70 → 0.64;
# chosen again once prime-rl's, the notebook table's and Check failed's needles came (the
# tool's run beside the set with those whole: 1.15 → 1.14, 0.86 → 0.85, 0.69 → 0.68).
# torchrun's needle ``received by PID`` (b536a3b), looked for whole, stopped grep at every ``r``:
# +36% on bench/make_log.py's log (0.099 → 0.135 CPU-s for 128 MiB) and +24% on the chatter; its
# part ``y PID`` costs nothing measurable on either or on the corpus (``by PID`` +12% on the chatter).
# Slurm's memory kill (1c63806), ``exceeded memory limit`` whole, stopped grep at every ``e``: +63%
# on the chatter, +24% on the make log (grep CPU, 128 MiB of each); its part ``xceeded memory limit``
# costs +1% and +5% (within the spread of five runs).
# verl's worker total (b1be79d), ``, num_warmup_steps: ``, is looked for whole: its part
# ``_warmup_steps: `` cost grep +8% CPU on the chatter and +11% on the make log (1 GiB of each,
# medians of five), the whole needle nothing measurable (1.00× both); the remote check of the
# make log had gone 1.40× → 1.55× of its baseline with the part.
# The failing rank's needles (2026-11-28), srun's ``Exited with exit code`` as ``xited with exit
# code`` and NCCL's per-rank ``enqueued NCCL work: `` as ``queued NCCL work: ``: grep CPU 1.00× on
# 256 MiB of the chatter and 1.00× on the make log (medians of seven, alternating with the set
# without them, this 2-CPU AMD EPYC VM).
# The stall's phase needles (tui/parsers/stall_evidence.py, 2026-11-28): verl's save line by
# ``folder: `` (its ``local_global_step_folder`` part ``_step_folder`` cost +12% on the make log,
# every ``_`` of its keys), its validation by ``'validate': True`` (``_gen_batch meta info`` +11%
# on the make log, ``batch meta info`` +13% on the chatter), the rest whole or from a capital:
# `python bench/phase_needles.py --size-mb 128 --tries 7`, grep CPU with them over without them,
# 1.02× on the make log and 0.99× on the chatter (the whole needles: 1.34× and 1.61×).
# The rollout engines' and the collectives' phase lines (vLLM's stats and sleep mode, SGLang's
# batches and weight reloads, NCCL's INFO/WARN, torch's ``Running collective: ``), whole: each
# starts with a capital or with the ``s`` that ``step:`` makes grep stop at anyway. `python
# bench/phase_needles.py --kinds rollout,weight-sync,collective,rollout-ended,collective-ended,
# weight-sync-ended`, grep CPU with them over without them (2026-11-28, this 2-CPU AMD EPYC VM,
# shared): 128 MiB of each, medians of 7, 0.98× on the make log and 1.01× on the chatter; 512 MiB,
# medians of 5, 0.97× and 0.96× (the first eight alone: 0.99×/1.01× and 1.00×/0.99×).
# slime's timer lines by ``Timer ``, whole (its only other part, ``imer ``, stops grep at every
# ``i``): `python bench/phase_needles.py --kinds timed` (2026-11-28, at 498dbdb, this 2-CPU AMD
# EPYC VM, shared), grep CPU with it over without it: 1.00× on the make log and 1.00× on the
# chatter (128 MiB, medians of 7; 512 MiB, medians of 5: 1.00× and 1.00×); ``imer `` 1.06× and 1.12×.
FORMS: dict[bytes, bytes] = {
    b'step:': b'step:',
    b'%|': b'%|',
    b'Total training steps': b'Total training steps',
    b', num_warmup_steps: ': b', num_warmup_steps: ',
    b'[prompt]': b'[prompt]',
    b'Final validation metrics': b'Final validation metrics',
    b'ut of memory': b'f memory',
    b'OutOfMemoryError': b'Error',
    b'RESOURCE_EXHAUSTED': b'URCE_EXHAUSTED',
    b'memory pressure': b'ssure',
    b"can't allocate memory": b"'t allocate memory",
    b'Detected ': b'Detected ',
    b': Out Of Memory': b'f Memory',
    b'exceeded memory limit': b'xceeded memory limit',
    b'Watchdog caught collective': b'ught collective',
    b'watchdog thread terminated': b'watchdog thread terminated',
    b'NCCL operations have failed': b'CL operations have failed',
    b'watchdog got stuck': b'watchdog got stuck',
    b'Heartbeat monitor timed out': b'Heartbeat monitor timed out',
    b'Terminating the process after attempting to dump debug info': b'Terminating the process after attempting to dump debug info',
    b'enqueued NCCL work: ': b'queued NCCL work: ',
    b'CUDA error': b'DA error',
    b'device-side assert': b'ssert',
    b'illegal memory access': b'y access',
    b'Assertion `': b'ssertion `',
    b'Inner Error': b'Error',
    b'died unexpectedly': b'unexpectedly',
    b'died or was killed': b's killed',
    b'ActorDiedError': b'Error',
    b'actor is dead because': b's dead because',
    b'Unhandled error': b'Unhandled error',
    b'RayTaskError': b'Error',
    b'RaySystemError': b'Error',
    b'raysubmit_': b'ysubmit_',
    b'entrypoint command failed': b'ypoint command failed',
    b'Error executing job with overrides': b'Error executing job with overrides',
    b'Killed': b'Killed',
    b'\xe5\xb7\xb2\xe6\x9d\x80\xe6\xad\xbb': b'\xe5\xb7\xb2\xe6\x9d\x80\xe6\xad\xbb',
    b'Killing subprocess': b'Killing subprocess',
    b'Terminated': b'Terminated',
    b' CANCELLED AT ': b'CANCELLED AT ',
    b'Exited with exit code': b'xited with exit code',
    b'received by PID': b'y PID',
    b'Segmentation fault': b'Segmentation fault',
    b'core dumped': b'umped',
    b'Fatal Python error': b'ython error',
    b'terminate called after throwing': b'fter throwing',
    b'received at time=': b'ved at time=',
    b'Check failed: ': b'Check failed: ',
    b'Traceback (most recent call last)': b'Traceback (most recent call last)',
    b'", line ': b'", line ',
    b'Error:': b'Error:',
    b'Exception:': b'Exception:',
    b'KeyboardInterrupt': b'yboardInterrupt',
    b"'loss':": b"'loss':",
    b'"loss": ': b'ss": ',
    b"'objective/": b"'objective/",
    b"{'eval_": b"'eval_",
    b"'train_runtime'": b"untime'",
    b'"train_runtime"': b'untime"',
    b'train metrics *****': b's *****',
    b's/it]': b's/it]',
    b": {'train/": b"'train/",
    b": {'rollout/": b"'rollout/",
    b": {'perf/": b"'perf/",
    b": {'eval/": b"'eval/",
    b'num_rollout ..': b'um_rollout ..',
    b'== Step ': b'Step ',
    b'== Epoch ': b'Epoch ',
    b'\xe2\x80\xa2 ': b'\xe2\x80\xa2 ',
    b'stopping training early': b'stopping training early',
    b'(Runner pid=': b'(Runner pid=',
    b'Global step ': b'Global step ',
    b'reward/avg_raw_reward': b'vg_raw_reward',
    b"'policy/": b"'policy/",
    b"'trainer/global_step'": b"step'",
    b"'policy_loss':": b"'policy_loss':",
    b"Finished: 'step'": b"Finished: 'step'",
    b'| consumed samples:': b'umed samples:',
    b'Training Loss': b'Training Loss',
    b', Epoch ': b'Epoch ',
    b'SUCCESS Step ': b'SUCCESS Step ',
    b'SUCCESS] Step ': b'SUCCESS] Step ',
    b'SUCCESS Train step ': b'SUCCESS Train step ',
    b'SUCCESS] Train step ': b'SUCCESS] Train step ',
    b'SUCCESS Orchestrator finished': b'SUCCESS Orchestrator finished',
    b'wandb': b'wandb',
    b"'validate': True": b"'validate': True",
    b'***** Running Evaluation': b'* Running Evaluation',
    b'local_global_step_folder: ': b'folder: ',
    b'Saving model checkpoint to': b'Saving model checkpoint to',
    b'Retrying request': b'Retrying request',
    b'Avg prompt throughput': b'Avg prompt throughput',
    b'Decode batch': b'Decode batch',
    b'Prefill batch': b'Prefill batch',
    b'seconds to wake up': b'seconds to wake up',
    b'seconds to fall asleep': b'seconds to fall asleep',
    b'NCCL INFO': b'NCCL INFO',
    b'NCCL WARN': b'NCCL WARN',
    b'Running collective: ': b'Running collective: ',
    b'Update engine weights online from': b'Update engine weights online from',
    b'Update weights end.': b'Update weights end.',
    b'Timer ': b'Timer ',
}
# What an extended regular expression gives a meaning to, escaped to stand for itself.
_ERE_SPECIAL = re.compile(r"([.\[\]()*+?{}|^$\\])")


def grep_needles(needles: Sequence[bytes]) -> tuple[bytes, ...]:
    """What grep looks for: each needle's part (``FORMS``), each once."""
    return tuple(dict.fromkeys(FORMS.get(needle, needle) for needle in needles))


def literal_ere(needles: Sequence[bytes]) -> str:
    """A POSIX extended regular expression matching every line that holds any of ``needles``
    (and the few others that hold a part of one)."""
    return alternatives(grep_needles(needles))


def alternatives(strings: Sequence[bytes]) -> str:
    """A POSIX extended regular expression matching any of ``strings`` literally."""
    return "|".join(_ERE_SPECIAL.sub(r"\\\1", string.decode()) for string in strings)


def grep_command(needles: Sequence[bytes], path: str) -> list[str]:
    """The argv of a byte-offset, binary-safe grep for any of ``needles`` in ``path``."""
    return ["grep", "-a", "-b", "-E", "-e", literal_ere(needles), "--", path]


def grep_stdin(needles: Sequence[bytes]) -> str:
    """A byte-offset, binary-safe grep for any of ``needles`` on stdin."""
    return f"LC_ALL=C grep -a -b -E -e {shlex.quote(literal_ere(needles))}"


def grep_piece(path: str, needles: Sequence[bytes], start: int, end: int | None) -> str:
    """``grep -b`` for the needles over ``[start, end)`` (to EOF when ``end`` is None).

    Offsets are relative to ``start``. The last piece is reached with a seek
    (``dd count=0`` on grep's own stdin) and read by grep directly; the
    others are cut out by ``dd`` in 1 MiB blocks and piped.
    """
    return piece_command(shlex.quote(path), needles, str(int(start)),
                         None if end is None else str(max(0, int(end) - int(start))))


def piece_command(path: str, needles: Sequence[bytes], start: str, length: str | None) -> str:
    """``grep_piece`` from shell words, already quoted (the box's backfill script passes
    its variables): ``length`` bytes of ``path`` from ``start``, or to EOF when None."""
    grep = grep_stdin(needles)
    if length is None:
        return f"{{ dd bs=1 skip={start} count=0 2>/dev/null; {grep}; }} <{path}"
    return (f"dd if={path} bs=1M skip={start} count={length} iflag=skip_bytes,count_bytes "
            f"2>/dev/null | {grep}")


def piece_starts(resume_at: int, cpus: int, min_bytes: int) -> list[int]:
    """Where to cut ``[0, resume_at)`` into one piece per CPU (at most 8, each at least
    ``min_bytes``), before aligning each cut to the next line start.

    The last piece is read by grep straight from the file and the others
    through a pipe, which costs grep half as much again per byte, so the last
    is 1.5 times as long as the others. The SSH plan computes the same cuts in
    shell on the box (``tui.sources.ssh.remote_commands``).
    """
    pieces = max(1, min(cpus, 8, resume_at // max(1, min_bytes)))
    return [resume_at * 2 * i // (2 * pieces + 1) for i in range(1, pieces)]


class GrepOutput:
    """Splits ``grep -b`` output, fed in arbitrary chunks, into (offset, line) pairs.

    ``base`` is added to every offset: grep counts from where it started reading,
    which for a piece of a file is the piece's start. A line that is not grep's
    (``OFFSET:`` missing) goes to ``other_line``, which may move ``base`` or set
    ``ended``; after ``ended`` nothing more is split, and the bytes not yet
    split are ``unsplit``.
    """

    def __init__(self, base: int = 0) -> None:
        self.unsplit = b""
        self.base = base
        self.ended = False

    def feed(self, chunk: bytes) -> list[tuple[int, bytes]]:
        """Complete ``(offset, line)`` pairs in the bytes so far; lines keep their newline."""
        data = self.unsplit + chunk if self.unsplit else chunk
        out = []
        start = 0
        # not splitlines(): a line may hold \r
        while not self.ended and (stop := data.find(b"\n", start) + 1):
            offset, colon, line = data[start:stop].partition(b":")
            if colon and offset.isdigit():
                out.append((self.base + int(offset), line))
            else:
                self.other_line(data[start:stop])
            start = stop
        self.unsplit = data[start:]
        return out

    def other_line(self, line: bytes) -> None:
        """A line without grep's ``OFFSET:``: none comes from grep itself."""


async def drain(stdout: asyncio.StreamReader, base: int, resume_at: int, queue: PieceQueue) -> None:
    """Put a piece's ``(offset, line)`` batches on ``queue`` until its output ends.

    Offsets count from ``base`` (the piece's start); lines from ``resume_at``
    on are dropped, since the follower reads them (the last piece reads to EOF).
    """
    output = GrepOutput(base=base)
    while chunk := await stdout.read(_READ_BYTES):
        if batch := [(o, line) for o, line in output.feed(chunk) if o < resume_at]:
            await queue.put(batch)


async def piece(queue: PieceQueue, work: Awaitable[None]) -> None:
    """Run ``work`` (which puts a piece's batches on ``queue``), then mark the piece done
    with None; or, when it fails, pass its error on for ``in_order`` to raise.

    An output that stopped early must never pass for a finished piece: the
    lines of the pieces after it would be taken, and its missing lines lost.
    """
    try:
        await work
    except asyncio.CancelledError as error:
        # Cancelled when its reader is gone: a full queue is read by no one.
        if not queue.full():
            queue.put_nowait(_Failed(error))
        raise
    except BaseException as error:
        await queue.put(_Failed(error))
        raise
    await queue.put(None)


async def in_order(queues: Sequence[PieceQueue]) -> AsyncIterator[list[tuple[int, bytes]]]:
    """The batches of every piece, piece after piece: the first streams as it comes, later ones
    wait until those before them are done (their output is small: the matching lines).
    A piece that failed raises its error here, before any later piece is read."""
    for queue in queues:
        while (batch := await queue.get()) is not None:
            if isinstance(batch, _Failed):
                raise batch.error
            yield batch


class _Failed:
    """A piece's error, queued where its end would be."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


# What a piece's reader queues: batches of ``(offset, line)``, then None at its end, or its error.
PieceQueue = asyncio.Queue["list[tuple[int, bytes]] | _Failed | None"]


def piece_queue() -> PieceQueue:
    """A queue for one piece's batches, bounded (``QUEUED_BATCHES``)."""
    return asyncio.Queue(maxsize=QUEUED_BATCHES)
