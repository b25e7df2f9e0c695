"""Ray's Jobs API and state API JSON (as a live Ray 2.60 head answered) into job records:
Ray's status in every scheduler's words, its failure message in one line naming the
exception, the nodes a job's accelerators are read on, and the job a target without one means."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tui.parsers.jobs.ray_jobs import (
    RayApiError,
    RayNode,
    describe_jobs,
    failure_message,
    job_nodes,
    parse_job,
    parse_jobs,
    parse_nodes,
    pick_job,
    ray_version,
)
from tui.parsers.records import JobOutcome

API = Path(__file__).parents[2] / "fixtures" / "ray_api"


def answer(name: str) -> object:
    return json.loads((API / name).read_text())


def test_a_failed_jobs_record_carries_the_exit_code_and_the_exception():
    record = parse_job(answer("job-rlw-fail-1.json")).record()
    assert (record.scheduler, record.job_id, record.state) == ("Ray", "rlw-fail-1", "FAILED")
    assert record.outcome == JobOutcome.FAILED
    assert record.message == "Job entrypoint command failed with exit code 1: RuntimeError: boom in step 2"
    assert record.started_at == pytest.approx(1795491802.242)
    assert record.ended_at == pytest.approx(1795491804.632)


@pytest.mark.parametrize(("name", "outcome", "message"), [
    ("job-rlw-ok-1.json", JobOutcome.SUCCEEDED, ""),
    ("job-rlw-long-1.json", JobOutcome.STOPPED, "Job was intentionally stopped"),
    ("job-rlw-pending-1.json", JobOutcome.PENDING, ""),
])
def test_each_ray_status_maps_to_its_outcome(name, outcome, message):
    record = parse_job(answer(name)).record()
    assert record.outcome == outcome
    assert record.message == message  # only an ended-badly job carries Ray's reason


def test_a_pending_job_has_no_start_time_yet():
    job = parse_job(answer("job-rlw-pending-1.json"))
    assert job.job_id is None and job.end_time_s is None


def test_the_job_list_holds_every_submitted_job():
    jobs = parse_jobs(answer("jobs.json"))
    assert {job.name for job in jobs} == {"rlw-ok-1", "rlw-fail-1", "rlw-long-1", "rlw-pending-1"}


def test_without_a_running_job_none_is_picked_and_the_list_names_them_newest_first():
    jobs = parse_jobs(answer("jobs.json"))
    assert pick_job(jobs) is None
    listed = describe_jobs(jobs)
    assert "\n" not in listed
    assert listed.index("rlw-long-1 (STOPPED") < listed.index("rlw-fail-1 (FAILED, python /tmp/rr2/fail.py)")


def test_the_newest_running_submitted_job_is_picked():
    jobs = parse_jobs(answer("jobs.json"))
    older = dict(answer("job-rlw-long-1.json"), status="RUNNING", submission_id="old", start_time=1)
    newer = dict(answer("job-rlw-long-1.json"), status="RUNNING", submission_id="new")
    driver = dict(newer, type="DRIVER", submission_id=None, job_id="03000000", start_time=2**62)
    picked = pick_job(jobs + parse_jobs([older, newer, driver]))
    assert picked is not None and picked.name == "new"


def test_a_driver_job_has_no_submission_id_whatever_it_holds():
    job = parse_job(dict(answer("job-rlw-ok-1.json"), type="DRIVER", job_id="01000000"))
    assert job.submission_id is None and job.name == "01000000"


def test_the_state_apis_nodes_and_the_ones_followed():
    nodes = parse_nodes(answer("nodes.json"))
    assert [(node.ip, node.is_head, node.alive) for node in nodes] == [("192.0.2.2", True, True)]
    assert job_nodes(nodes) == ()  # the head is the source's own host
    workers = nodes + [RayNode("b", "10.0.0.7", "10.0.0.7", False, True),
                       RayNode("c", "10.0.0.8", "10.0.0.8", False, False)]
    assert job_nodes(workers) == ("10.0.0.7",)


def test_a_ray_dashboard_names_its_version_and_anything_else_is_refused():
    assert ray_version(answer("version.json")) == "2.60.0"
    with pytest.raises(RayApiError, match="not a Ray dashboard"):
        ray_version({"status": "ok"})


@pytest.mark.parametrize("bad", [None, [], {"status": 3}, {"status": "RUNNING"},
                                 {"status": "RUNNING", "job_id": "1", "start_time": "yesterday"}])
def test_a_job_that_does_not_fit_is_refused_in_one_line(bad):
    with pytest.raises(RayApiError) as raised:
        parse_job(bad)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("bad", [None, {}, {"data": {"result": {"result": {}}}},
                                 {"data": {"result": {"result": [{"node_ip": 1}]}}}])
def test_a_node_list_that_does_not_fit_is_refused(bad):
    with pytest.raises(RayApiError):
        parse_nodes(bad)


def test_a_one_line_reason_stays_as_ray_wrote_it():
    assert failure_message("Job supervisor actor died: node lost") == "Job supervisor actor died: node lost"
    assert failure_message("") == ""


@given(st.text())
def test_any_message_becomes_at_most_one_short_line(message):
    line = failure_message(message)
    assert "\n" not in line and "\r" not in line and len(line) <= 300
