"""Ray's Jobs REST API and state API, as JSON, into job records and node lists.

The grammar, read off Ray's dashboard (``ray/dashboard/modules/job/job_head.py``,
``common.py``, ``pydantic_models.py``; ``ray/dashboard/modules/state/state_head.py``;
checked against a live Ray 2.60 head):

* ``GET /api/jobs/`` is a JSON list of job details, ``GET /api/jobs/{id}`` one of them
  (``id``: the submission id ``raysubmit_…`` or the driver's job id; 404 with a text body
  for an unknown job). A job's details: ``type`` (``SUBMISSION`` for ``ray job submit``,
  ``DRIVER`` for a script that called ``ray.init`` itself: Ray keeps no log for those),
  ``job_id`` (null until its driver starts), ``submission_id``, ``status`` (``PENDING``,
  ``RUNNING``, ``STOPPED``, ``SUCCEEDED``, ``FAILED``), ``entrypoint``, ``message``,
  ``error_type`` (``JOB_ENTRYPOINT_COMMAND_ERROR``…), ``start_time`` and ``end_time`` (epoch
  milliseconds, null until then), ``driver_node_id``, ``driver_exit_code``, and more that
  is not read here.
* A failed entrypoint's ``message`` is ``Job entrypoint command failed with exit code N,
  last available logs (truncated to 20,000 chars):`` followed by the log's last ten lines,
  whose last is the exception (``RuntimeError: …``); other failures say why in one line
  (``Job supervisor actor died…``); an ended job with no message of its own gets Ray's
  default (``Job failed.``).
* ``GET /api/v0/nodes`` is ``{"result": true, "msg": "", "data": {"result": {"total": N,
  "result": [node…]}}}``; a node: ``node_id``, ``node_ip``, ``node_name`` (the IP unless
  set), ``is_head_node``, ``state`` (``ALIVE``/``DEAD``).
* ``GET /api/version``: ``{"version": "4", "ray_version": "2.60.0", …}``, which tells a
  Ray dashboard from anything else listening on the port.

JSON that does not fit raises ``RayApiError`` with one line saying what did not fit.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui.parsers.records import JobOutcome, JobRecord

SCHEDULER = "Ray"

_OUTCOMES = {
    "PENDING": JobOutcome.PENDING,
    "RUNNING": JobOutcome.RUNNING,
    "SUCCEEDED": JobOutcome.SUCCEEDED,
    "FAILED": JobOutcome.FAILED,
    "STOPPED": JobOutcome.STOPPED,
}
# What a failed entrypoint's message says before the log's last lines.
_LOG_TAIL_HEAD = ", last available logs"
# A message line longer than this is cut: it becomes a finding's exception, one line.
_MESSAGE_CHARS = 300


class RayApiError(ValueError):
    """An answer that is not what Ray's dashboard sends; the message is one line."""


@dataclass(frozen=True, slots=True)
class RayJob:
    """One job as Ray's Jobs API describes it."""

    submission_id: str | None   # None: a driver job (``ray.init`` in a script), which has no log here
    job_id: str | None
    status: str
    entrypoint: str
    message: str
    start_time_s: float | None
    end_time_s: float | None
    driver_node_id: str | None

    @property
    def name(self) -> str:
        """The id users know it by (the one ``ray job`` prints)."""
        return self.submission_id or self.job_id or "?"

    @property
    def outcome(self) -> JobOutcome:
        """Ray's status in every scheduler's words (an unknown status changes nothing)."""
        return _OUTCOMES.get(self.status, JobOutcome.RUNNING)

    def record(self, nodes: tuple[str, ...] = ()) -> JobRecord:
        """The job as the model keeps it; ``nodes``: the hosts it runs on besides the head."""
        message = failure_message(self.message) if self.outcome in (
            JobOutcome.FAILED, JobOutcome.STOPPED) else ""
        return JobRecord(SCHEDULER, self.name, self.status, self.outcome, message, nodes,
                         started_at=self.start_time_s, ended_at=self.end_time_s)


@dataclass(frozen=True, slots=True)
class RayNode:
    """One node of the cluster, from the state API."""

    node_id: str
    ip: str
    name: str
    is_head: bool
    alive: bool


def failure_message(message: str) -> str:
    """Ray's reason for a failed or stopped job, in one line.

    A failed entrypoint's message carries the log's last lines: its first line
    (the exit code) is kept, and the last of those lines, which names the
    exception, is put after it.
    """
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if not lines:
        return ""
    head, _, _ = lines[0].partition(_LOG_TAIL_HEAD)
    head = head.rstrip(":. ")
    if _LOG_TAIL_HEAD in lines[0] and len(lines) > 1:
        head = f"{head}: {lines[-1]}"
    return one_line(head, _MESSAGE_CHARS)


def _text(value: object, field: str, optional: bool = True) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise RayApiError(f"a job's {field!r} is {type(value).__name__}, not text")
    return value


def _seconds(value: object, field: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RayApiError(f"a job's {field!r} is {type(value).__name__}, not a time in milliseconds")
    return value / 1000.0


def parse_job(data: object) -> RayJob:
    """One job's details (``GET /api/jobs/{id}``, or one item of the list)."""
    if not isinstance(data, dict):
        raise RayApiError(f"a job is {type(data).__name__}, not an object")
    status = _text(data.get("status"), "status", optional=False)
    submission_id = _text(data.get("submission_id"), "submission_id")
    job_id = _text(data.get("job_id"), "job_id")
    if data.get("type", "SUBMISSION") != "SUBMISSION":
        submission_id = None  # a driver job: no Jobs-API log, whatever it holds
    if submission_id is None and job_id is None:
        raise RayApiError("a job has neither a submission_id nor a job_id")
    return RayJob(submission_id, job_id, status or "",
                  _text(data.get("entrypoint"), "entrypoint") or "",
                  _text(data.get("message"), "message") or "",
                  _seconds(data.get("start_time"), "start_time"),
                  _seconds(data.get("end_time"), "end_time"),
                  _text(data.get("driver_node_id"), "driver_node_id"))


def parse_jobs(data: object) -> list[RayJob]:
    """The job list (``GET /api/jobs/``)."""
    if not isinstance(data, list):
        raise RayApiError(f"the job list is {type(data).__name__}, not a list")
    return [parse_job(item) for item in data]


def parse_nodes(data: object) -> list[RayNode]:
    """The cluster's nodes (``GET /api/v0/nodes``), dead ones included (``alive`` says)."""
    try:
        answer = data["data"]["result"]  # type: ignore[index]
        rows = answer["result"]
    except (KeyError, TypeError):
        raise RayApiError("the node list is not the state API's {data: {result: {result: [...]}}}") from None
    if not isinstance(rows, list):
        raise RayApiError("the node list is not a list")
    nodes = []
    for row in rows:
        if not isinstance(row, dict) or not isinstance(row.get("node_ip"), str) \
                or not isinstance(row.get("node_id"), str):
            raise RayApiError("a node has no node_ip or node_id")
        name = row.get("node_name")
        nodes.append(RayNode(row["node_id"], row["node_ip"], name if isinstance(name, str) and name
                             else row["node_ip"], row.get("is_head_node") is True,
                             row.get("state") == "ALIVE"))
    return nodes


def ray_version(data: object) -> str:
    """The Ray version a dashboard's ``/api/version`` names (RayApiError: not a Ray dashboard)."""
    version = data.get("ray_version") if isinstance(data, dict) else None
    if not isinstance(version, str):
        raise RayApiError("it answered /api/version without a ray_version: not a Ray dashboard")
    return version


def job_nodes(nodes: list[RayNode]) -> tuple[str, ...]:
    """The names under which a job's nodes are followed: every live node but the head
    (the head is the source's own host, read already)."""
    return tuple(node.ip for node in nodes if node.alive and not node.is_head)


def pick_job(jobs: list[RayJob]) -> RayJob | None:
    """The job a target without one means: the newest running job with a log."""
    running = [job for job in jobs if job.outcome == JobOutcome.RUNNING and job.submission_id]
    return max(running, key=lambda job: job.start_time_s or 0.0, default=None)


def describe_jobs(jobs: list[RayJob], limit: int = 8) -> str:
    """The jobs a user may pick from, newest first, on one line: ``id (STATUS, entrypoint)``."""
    shown = sorted((job for job in jobs if job.submission_id),
                   key=lambda job: job.start_time_s or 0.0, reverse=True)
    if not shown:
        return "no job was submitted with `ray job submit`"
    words = [f"{job.name} ({job.status}, {one_line(job.entrypoint)})" for job in shown[:limit]]
    if len(shown) > limit:
        words.append(f"and {len(shown) - limit} older")
    return "; ".join(words)


def one_line(text: str, chars: int = 60) -> str:
    """``text`` on one line of at most ``chars`` characters (whitespace runs made one space)."""
    line = " ".join(text.split())
    return line if len(line) <= chars else line[:chars - 1] + "…"
