"""Cleaning a raw console line before any grammar looks at it, and making log text
safe to show.

Ray forwards actor output with a coloured ``(TaskRunner pid=N)`` prefix, tqdm
redraws with ``\\r``, and users' terminals add colour codes; all of that is
stripped here, once, so every grammar sees plain text.

Log text is untrusted: :func:`safe_text` is the one function every output
(the dashboard, ``check``, ``status``, the report, the terminal title, the
``--on-critical`` hook, export) passes it through before it can reach a
terminal. See its docstring for the visible form.
"""

from __future__ import annotations

import re
from typing import Any

# CSI sequences (colours, cursor moves) and the two-byte ESC forms tqdm and
# terminals leave behind.
_ANSI = re.compile(r"\x1b(?:\[[0-9;?]*[A-Za-z]|[()][A-Z0-9]|[=>78])")
# ``(TaskRunner pid=1)``, ``(pid=1)``, ``(main_task pid=1)``,
# ``(TaskRunnerV1 pid=1, ip=10.0.0.2)``, ``(raylet)``; may repeat after a
# carriage return, so it is stripped wherever a segment starts. torchrun's
# per-rank prefixes (``[rank3]:``, ``[default0]:`` with ``--tee``) are the same
# kind of thing: which process printed the line.
# A paste that lost the ESC bytes leaves ``[36m(WorkerDict pid=7)[0m`` behind.
# An actor that defines ``__repr__`` is named by it: NeMo-RL's
# ``(DTensorPolicyWorker[rank=0] pid=9008, ip=10.4.2.13)``, ``(Worker(index=2) pid=8)``.
# vLLM >= 0.10 names its own processes the same way, so inside a Ray actor a line carries
# two: ``(Worker pid=16884) (Worker_DP0_TP1_EP1 pid=16884) ``, ``(vLLMHttpServer pid=1)
# (EngineCore_DP0 pid=2) ``; both together are the process that printed it. torchrun inside a
# Ray actor (OpenRLHF's, verl's Megatron workers) puts its rank after Ray's name:
# ``(ActorModelRayActor pid=1, ip=10.0.0.2) [rank0]:[E1225 …] ``; it goes with it.
_RAY_NAME = (r"\((?:[\w.:\[\]=,-]{1,120}(?:\([^()\n]{0,80}\))? )?pid=\d+(?:, ip=[^)]*)?\)"
             r"|\(raylet(?:, ip=[^)]*)?\)")
_RANK = r"\[(?:rank|default)\d+\]:\s?"
PROCESS_PREFIX = re.compile(rf"^(?:\[[\d;]{{1,12}}m)?(?:{_RAY_NAME})(?:\[[\d;]{{0,12}}m)?"
                            rf"(?: (?:{_RAY_NAME}))?\s?(?:{_RANK})?"
                            rf"|^{_RANK}")


# A time a log collector, not the program, wrote in front of every line it captured:
# ``kubectl logs --timestamps`` and ``docker logs -t`` (RFC 3339, nanoseconds),
# GitHub Actions' raw job logs (``2025-06-10T08:21:33.1234567Z``), also behind the
# ``job<TAB>step<TAB>`` columns of ``gh run view --log``, and Google Cloud Logging's
# export with the entry's severity in front (``ERROR 2025-03-30T23:51:21.303592681Z``).
# Only the full RFC 3339 form with a zone is taken: a program's own log time
# (``2025-06-10 08:21:33,123 INFO``, loguru's ``2026-03-26 14:44:59.431 |``) has no
# ``T`` and belongs to its line.
_COLLECTOR_STAMP = re.compile(r"(?:[^\t\n]{1,200}\t[^\t\n]{1,200}\t)?"
                              r"(?:(?:DEFAULT|DEBUG|INFO|NOTICE|WARNING|ERROR|CRITICAL|ALERT|EMERGENCY) )?"
                              r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:?\d\d) ?")


# ``srun --label`` puts the task's number in front of each line it relays, right-aligned
# to the widest number (``0: ``, `` 3: ``, ``15: ``).
_SRUN_LABEL = re.compile(r" {0,4}\d{1,5}: ")
# pdsh and clush (without ``-b``) put the host a line came from in front of it: ``node01: ``,
# ``gpu-a100-3.cluster: ``. Only a cluster's host name is taken: lower case, a digit in its
# first label, so that ``RuntimeError: `` or a CANN code (``EI0006: ``) stays the line's own.
# DeepSpeed's multi-node launcher runs pdsh (``worker-1: ``); relayed once more, a line has two.
_HOST_LABEL = re.compile(r"(?:[a-z][a-z0-9-]{0,62}?\d[a-z0-9-]{0,62}(?:\.[a-z0-9-]{1,63}){0,6}: ){1,2}")
# The same host in brackets: kubetail's ``[trainer-worker-0] `` (the pod), Alibaba PAI-DLC's
# job log view (``[dlc163vnre3d5pv3-master-0] ``); a bracket and a space, not torchrun's
# ``[rank3]:``. A pod's name has a hyphen (``<job>-master-0``), which a program's own
# bracketed word (``[step1] ``) has not.
_BRACKETED_HOST = re.compile(r"\[(?=[^\]]{0,62}\d)[a-z][a-z0-9]{0,62}(?:-[a-z0-9]{1,62}){1,8}"
                             r"(?:\.[a-z0-9-]{1,63}){0,6}\] ")
# Open MPI's ``mpirun --tag-output`` (``--output tag`` in 5.x): ``[1,0]<stdout>:`` (job, rank).
_MPI_TAG = re.compile(r"\[\d+,\d+\]<std(?:out|err)>: ?")
# A log quoted in Markdown (an issue's reply: ``> Traceback (most recent call last):``).
_QUOTE = re.compile(r"(?:> ?)+")


def strip_stamp(text: str) -> str:
    """Remove what a log collector wrote in front of a line: its timestamp (see
    ``_COLLECTOR_STAMP``), ``srun --label``'s task number, pdsh's or clush's host,
    ``mpirun --tag-output``'s rank, a Markdown quote's ``> `` (a quoted paste of a relayed
    log, or a relayed log that is itself a quote: either order)."""
    relayed = _strip_relay(text)
    if relayed is not text:
        text = _strip_relay(relayed)
    if "T" not in text[8:30] and "\t" not in text[:402]:
        return text
    match = _COLLECTOR_STAMP.match(text)
    return text[match.end():] if match else text


def relay_label(text: str) -> tuple[str, str, str] | None:
    """What a relay wrote in front of ``text`` that says where it came from: ("host", the
    host of pdsh's ``node01: `` or a pod's ``[job-master-0] ``) or ("task", the number of
    ``srun --label``'s ``3: ``), with the rest of the line; None where there is no label."""
    first = text[:1]
    if first.isdigit() or first == " ":
        label = _SRUN_LABEL.match(text)
        return ("task", label.group(0).strip(" :"), text[label.end():]) if label else None
    label = (_HOST_LABEL.match(text) if "a" <= first <= "z" else
             _BRACKETED_HOST.match(text) if first == "[" else None)
    if label is None:
        return None
    host = label.group(0).split(": ")[0].strip("[] ")
    return "host", host, text[label.end():]


def _strip_relay(text: str) -> str:
    """``text`` without a Markdown quote, an MPI rank tag and a task or host label in front
    (the same object where there is none)."""
    quote = _QUOTE.match(text) if text[:1] == ">" else None
    if quote is not None:
        text = text[quote.end():]
    tag = _MPI_TAG.match(text) if text[:1] == "[" else None
    if tag is not None:
        text = text[tag.end():]
    first = text[:1]
    label = (_SRUN_LABEL.match(text) if first.isdigit() or first == " " else
             _HOST_LABEL.match(text) if "a" <= first <= "z" else
             _BRACKETED_HOST.match(text) if first == "[" else None)
    return text[label.end():] if label is not None else text


# vLLM's log header, which its formatter repeats on every line of a multi-line record
# (a traceback logged with ``logger.exception``): ``ERROR 01-08 17:16:15
# [serving_chat.py:1278] `` (vLLM >= 0.8), ``ERROR 06-09 06:57:48 worker_base.py:581] ``.
_VLLM_HEADER = re.compile(r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? "
                          r"\[?[\w./-]+:\d+\] ?")


def strip_log_header(text: str) -> str:
    """Remove vLLM's per-line log header (see ``_VLLM_HEADER``), keeping the message's
    own indentation (a traceback's ``  File …`` rows)."""
    if not text.startswith(("DEBUG ", "INFO ", "WARNING ", "ERROR ", "CRITICAL ")):
        return text
    match = _VLLM_HEADER.match(text)
    return text[match.end():] if match else text


def strip_ansi(text: str) -> str:
    """Remove terminal escape sequences (colours, cursor movement)."""
    if "\x1b" not in text:
        return text
    return _ANSI.sub("", text)


def strip_ray_prefix(text: str) -> str:
    """Remove a leading process prefix: Ray's ``(TaskRunner pid=12)``, torchrun's ``[rank3]:``
    (and a log collector's timestamp in front of it)."""
    text = strip_stamp(text)
    if not text.startswith(("(", "[")):
        return text
    return PROCESS_PREFIX.sub("", text, count=1)


def decode(raw: bytes) -> str:
    """Decode log bytes; invalid UTF-8 becomes U+FFFD rather than an error."""
    return raw.decode("utf-8", errors="replace")


def clean_segments(line: str) -> list[str]:
    """Split a physical line into its ``\\r``-separated redraws, each cleaned.

    A tqdm bar rewrites itself with ``\\r`` many times in one physical line;
    every segment is kept because a step line can follow the last bar redraw
    in the same segment, and earlier segments carry earlier progress ticks.
    """
    text = strip_ansi(line.rstrip("\r\n"))
    parts = text.split("\r") if "\r" in text else [text]
    out = []
    for part in parts:
        part = strip_ray_prefix(part)
        if part.strip():
            out.append(part)
    return out


# --- Showing untrusted text -------------------------------------------------

# SGR (colour and style: ``ESC [ 1;31 m``, ``ESC [ 38:2:1:2:3 m``): dropped
# without a trace where text is shown plain; it changes nothing but colour.
_SGR = re.compile(r"\x1b\[[0-9;:]*m")
# Unicode's bidirectional formatting characters: embeddings and overrides (U+202A–U+202E),
# isolates (U+2066–U+2069) and the marks (LRM U+200E, RLM U+200F, ALM U+061C). Invisible, and a
# terminal or viewer that applies the bidi algorithm reorders the text around them, so that
# what is read is not what is there ("Trojan Source"): ``loss ok\u202e nan`` can read "nan ok".
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# Every code point a terminal may act on (C0 but tab and newline, DEL, C1),
# tab and newline (decided by the caller), the bidi controls, and lone surrogates (from a
# ``surrogateescape`` decode: they cannot even be encoded for output).
_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}\ud800-\udfff]")
_UNSAFE_BUT_NEWLINE = re.compile(f"[\x00-\x09\x0b-\x1f\x7f-\x9f{_BIDI}\ud800-\udfff]")


def _visible(code: int) -> str:
    if code < 0x20:
        return chr(0x2400 + code)  # ␀ … ␛ … ␟: Unicode's control pictures, one cell each
    if code == 0x7F:
        return "\u2421"  # ␡
    if code <= 0x9F:
        return f"\\x{code:02x}"  # C1 has no pictures: ``\x9b`` (8-bit CSI) as Python writes it
    if not 0xD800 <= code <= 0xDFFF:
        return f"\\u{code:04x}"  # a bidi control: ``\u202e``, as Python writes it
    return "\ufffd"  # a lone surrogate


_SHOWN = {code: _visible(code) for code in [*range(0x20), *range(0x7F, 0xA0)]}


def _show(match: re.Match[str]) -> str:
    code = ord(match.group())
    return _SHOWN.get(code) or _visible(code)


def safe_text(text: str, *, multiline: bool = False, tabsize: int = 8) -> str:
    r"""``text`` (from a log, a remote file name, an smi tool) as it may be shown or printed:
    nothing in it can drive a terminal, and every such thing is still visible.

    * SGR colour codes (``ESC [ … m``) are removed: where text is shown plain
      they carry nothing.
    * Every other control character is replaced by a visible stand-in of its
      own, so an escape sequence is shown as the text it is, inert:
      ``ESC ] 0;title BEL`` becomes ``␛]0;title␇``, a clear screen
      ``ESC [ 2 J`` becomes ``␛[2J``. C0 (0x00–0x1f) becomes the Unicode
      control picture U+2400+n (``␀``, ``␇``, ``␍``, ``␛``), DEL ``␡``, C1
      (0x80–0x9f, which UTF-8 terminals may act on: 0x9b is CSI, 0x9d OSC)
      ``\x80``–``\x9f``, a bidirectional control (U+202A–U+202E, U+2066–U+2069,
      U+200E, U+200F, U+061C: they reorder what a bidi-aware terminal shows) ``\u202e``
      as Python writes it, and a lone surrogate U+FFFD.
    * Tabs become spaces (to the next multiple of ``tabsize``).
    * Newlines are kept when ``multiline`` (a ``\r\n`` becomes ``\n``); in a
      one-line output they become ``␊``.

    Sequences are not parsed beyond SGR, so nothing can hide in an unusual or
    unfinished one (OSC, DCS, APC, PM, SOS, 8-bit CSI, a lone ESC at the end):
    every control character is shown, whatever surrounds it. Pure, and fast
    on text with nothing to show (one regex scan).

    Rich/Textual markup is not a control: callers show the result as
    ``Content``/``Text``, never as markup.
    """
    if "\x1b" in text:
        text = _SGR.sub("", text)
    if "\t" in text:
        text = text.expandtabs(tabsize)
    if multiline and "\r\n" in text:
        text = text.replace("\r\n", "\n")
    unsafe = _UNSAFE_BUT_NEWLINE if multiline else _UNSAFE
    if unsafe.search(text) is None:
        return text
    return unsafe.sub(_show, text)


def safe_data(value: Any) -> Any:
    """``value`` (a JSON-able object) with every string in it, keys too, passed through
    :func:`safe_text` (newlines kept): what the JSON outputs print.

    ``json.dumps`` escapes every control character (C1 only while
    ``ensure_ascii``, its default), so the JSON's own bytes are inert; but a
    consumer's ``jq -r`` or ``print(obj["message"])`` writes them decoded, raw.
    The visible form is what every output shows, so the JSON says the same.
    """
    if isinstance(value, str):
        return safe_text(value, multiline=True)
    if isinstance(value, dict):
        return {safe_data(key): safe_data(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [safe_data(item) for item in value]
    return value
