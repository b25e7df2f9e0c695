"""Slurm's answers read as a job: scontrol's one-line record (lines printed by Slurm 22.05 on
Debian 12), sacct's ``|``-separated rows (the fields sacct(1) documents), squeue's lines,
time limits in Slurm's forms, host lists in Slurm's grammar, and the states in the verdict's
words."""

from __future__ import annotations

import pytest

from tui.parsers.jobs.slurm import (
    MAX_HOSTS,
    SlurmAnswerError,
    accounting_off,
    expand_hostlist,
    expand_output_pattern,
    outcome_of,
    parse_duration,
    parse_sacct,
    parse_scontrol,
    parse_squeue,
    scontrol_fields,
    unknown_to_controller,
)
from tui.parsers.records import JobOutcome

# `TZ=UTC scontrol show job -o 2` on Slurm 22.05.8 (Debian 12): a job that exited 1.
FAILED = (
    "JobId=2 JobName=fail.sh UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901758 "
    "Nice=0 Account=(null) QOS=(null) JobState=FAILED Reason=NonZeroExitCode Dependency=(null) "
    "Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=1:0 RunTime=00:00:00 "
    "TimeLimit=365-00:00:00 TimeMin=N/A SubmitTime=2026-11-24T03:42:05 "
    "EligibleTime=2026-11-24T03:42:05 AccrueTime=2026-11-24T03:42:05 "
    "StartTime=2026-11-24T03:42:06 EndTime=2026-11-24T03:42:06 Deadline=N/A SuspendTime=None "
    "SecsPreSuspend=0 LastSchedEval=2026-11-24T03:42:06 Scheduler=Backfill Partition=debug "
    "AllocNode:Sid=localhost:9304 ReqNodeList=(null) ExcNodeList=(null) NodeList=localhost "
    "BatchHost=localhost NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* "
    "TRES=cpu=1,mem=1M,node=1,billing=1 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* "
    "MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 "
    "OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command=/tmp/slurmtry/fail.sh "
    "WorkDir=/tmp/slurmtry StdErr=/tmp/slurmtry/f-2.out StdIn=/dev/null "
    "StdOut=/tmp/slurmtry/f-2.out Power= \n")
# The same for a job that is running (one minute limit, 31 s in).
RUNNING = FAILED.replace("JobId=2 JobName=fail.sh", "JobId=4 JobName=long.sh") \
    .replace("JobState=FAILED Reason=NonZeroExitCode", "JobState=RUNNING Reason=None") \
    .replace("ExitCode=1:0 RunTime=00:00:00", "ExitCode=0:0 RunTime=00:00:31") \
    .replace("TimeLimit=365-00:00:00", "TimeLimit=00:01:00")
SCONTROL_UNKNOWN = "slurm_load_jobs error: Invalid job id specified\n"


def test_a_failed_jobs_record_says_why_where_and_when():
    job = parse_scontrol(FAILED, now=0.0)
    record = job.record
    assert (record.scheduler, record.job_id, record.state) == ("Slurm", "2", "FAILED")
    assert record.outcome == JobOutcome.FAILED
    assert record.message == "NonZeroExitCode, exit code 1"
    assert record.nodes == ("localhost",)
    assert record.time_limit_s == 365 * 86400
    assert record.started_at == 1795491726.0  # 2026-11-24T03:42:06 UTC
    assert record.ended_at == record.started_at
    assert record.note == "scontrol"
    assert (job.name, job.stdout) == ("fail.sh", "/tmp/slurmtry/f-2.out")


def test_a_running_jobs_start_is_its_run_time_ago_on_this_clock():
    record = parse_scontrol(RUNNING, now=10_000.0).record
    assert record.outcome == JobOutcome.RUNNING
    assert record.message == ""  # Reason=None, and no exit code yet
    assert record.started_at == 10_000.0 - 31
    assert record.ended_at is None
    assert record.time_left_s(10_000.0) == 29.0


def test_a_path_with_spaces_is_read_whole():
    line = FAILED.replace("StdOut=/tmp/slurmtry/f-2.out", "StdOut=/data/my runs/grpo 7b/out.log")
    assert parse_scontrol(line).stdout == "/data/my runs/grpo 7b/out.log"
    assert scontrol_fields("AllocNode:Sid=h:1 CPUs/Task=2 Power=")["CPUs/Task"] == "2"


def test_an_answer_that_is_no_record_is_refused_with_slurms_words():
    with pytest.raises(SlurmAnswerError, match="Invalid job id specified"):
        parse_scontrol(SCONTROL_UNKNOWN)
    assert unknown_to_controller(SCONTROL_UNKNOWN)
    with pytest.raises(SlurmAnswerError):
        parse_scontrol("")


@pytest.mark.parametrize(("state", "outcome"), [
    ("PENDING", JobOutcome.PENDING), ("CONFIGURING", JobOutcome.PENDING),
    ("REQUEUE_HOLD", JobOutcome.PENDING),
    ("RUNNING", JobOutcome.RUNNING), ("COMPLETING", JobOutcome.RUNNING),
    ("SUSPENDED", JobOutcome.RUNNING),
    ("COMPLETED", JobOutcome.SUCCEEDED),
    ("FAILED", JobOutcome.FAILED), ("TIMEOUT", JobOutcome.FAILED),
    ("OUT_OF_MEMORY", JobOutcome.FAILED), ("NODE_FAIL", JobOutcome.FAILED),
    ("BOOT_FAIL", JobOutcome.FAILED), ("DEADLINE", JobOutcome.FAILED),
    ("CANCELLED", JobOutcome.STOPPED), ("CANCELLED by 1000", JobOutcome.STOPPED),
    ("PREEMPTED", JobOutcome.STOPPED),
    ("SOME_FUTURE_STATE", JobOutcome.RUNNING), ("", JobOutcome.RUNNING),
])
def test_slurms_states_in_the_verdicts_words(state, outcome):
    assert outcome_of(state) == outcome


@pytest.mark.parametrize(("text", "seconds"), [
    ("00:05:00", 300), ("365-00:00:00", 365 * 86400), ("1-02:03:04", 93784),
    ("90", 5400), ("90:30", 5430), ("2-12", 216000), ("2-12:30", 217800),
    ("UNLIMITED", None), ("Partition_Limit", None), ("INFINITE", None), ("", None),
])
def test_time_limits_in_each_of_slurms_forms(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["1:2:3:4", "abc", "1-", "-5", "1-2-3", "5 min"])
def test_a_duration_slurm_does_not_write_is_refused(text):
    with pytest.raises(SlurmAnswerError):
        parse_duration(text)


@pytest.mark.parametrize(("text", "hosts"), [
    ("gpu[01-03,07]", ("gpu01", "gpu02", "gpu03", "gpu07")),
    ("gpu[8-11]", ("gpu8", "gpu9", "gpu10", "gpu11")),
    ("node[001-3]", ("node001", "node002", "node003")),
    ("a[1-2]b[08-09]", ("a1b08", "a1b09", "a2b08", "a2b09")),
    ("n1,n[3-4] x9", ("n1", "n3", "n4", "x9")),
    ("c[1-2]-[3-4]", ("c1-3", "c1-4", "c2-3", "c2-4")),
    ("localhost", ("localhost",)),
    ("", ()), ("(null)", ()),
])
def test_host_lists_expand_as_slurm_expands_them(text, hosts):
    assert expand_hostlist(text) == hosts


@pytest.mark.parametrize("text", ["gpu[01-03", "gpu]1[", "gpu[3-1]", "gpu[a-b]", "gpu[1-]", "rack[1-2]-ib",
                                  f"gpu[0-{MAX_HOSTS}]", "a[0-999]b[0-999]"])
def test_a_host_list_that_cannot_be_expanded_is_refused(text):
    with pytest.raises(SlurmAnswerError):
        expand_hostlist(text)


SACCT_ROW = "812|grpo-7b|TIMEOUT|0:15|gpu[01-02]|1-00:00:00|2026-11-24T01:00:00|" \
            "2026-11-25T01:00:03|TimeLimit|/home/ana/runs"


def test_sacct_without_stdout_points_at_sbatchs_default_file():
    job = parse_sacct(SACCT_ROW + "\n", "812")
    record = job.record
    assert (record.state, record.outcome, record.message) == ("TIMEOUT", JobOutcome.FAILED,
                                                               "TimeLimit, signal 15")
    assert record.nodes == ("gpu01", "gpu02")
    assert record.time_limit_s == 86400
    assert record.ended_at - record.started_at == 86403
    assert record.note == "sacct"
    assert (job.stdout, job.guessed_stdout) == ("/home/ana/runs/slurm-812.out", True)


def test_sacct_with_stdout_fills_in_its_file_name_pattern():
    job = parse_sacct(SACCT_ROW + "|/scratch/%x-%j.%N.log\n", "812")
    assert (job.stdout, job.guessed_stdout) == ("/scratch/grpo-7b-812.gpu01.log", False)


def test_sacct_says_when_accounting_is_off():
    said = "Slurm accounting storage is disabled\n"
    assert accounting_off(said)
    with pytest.raises(SlurmAnswerError, match="accounting storage is disabled"):
        parse_sacct(said, "812")
    with pytest.raises(SlurmAnswerError):
        parse_sacct(SACCT_ROW.replace("812|", "813|", 1), "812")  # another job's row


def test_output_patterns_keep_what_is_not_known_and_padding():
    assert expand_output_pattern("/o/%u/%a-%5j-%%.out", "42", "x", "") == "/o/%u/%a-00042-%.out"


def test_squeue_lines_are_the_users_jobs():
    text = ("812|RUNNING|1:02:03|2:00:00|gpu[01-02]|None|grpo|7b\n"
            "813|PENDING|0:00|UNLIMITED||Priority|sweep-lr\n"
            "squeue: warning: something\n")
    running, pending = parse_squeue(text, now=10_000.0)
    assert running.name == "grpo|7b"  # the name is split off last
    assert running.record.nodes == ("gpu01", "gpu02")
    assert running.record.started_at == 10_000.0 - 3723
    assert running.record.time_left_s(10_000.0) == 7200 - 3723
    assert (pending.record.outcome, pending.record.message) == (JobOutcome.PENDING, "Priority")
    assert pending.record.started_at is None and pending.record.time_limit_s is None
