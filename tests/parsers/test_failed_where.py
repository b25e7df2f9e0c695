"""Where a failure happened, read by the grammar of each line that says it (lines from real logs)."""

from __future__ import annotations

import pytest

from tui.parsers.failed_where import read_box_entry, read_line, root_cause_entry
from tui.parsers.records import Where


@pytest.mark.parametrize(("line", "where"), [
    # torchrun's prefix on a rank's own lines (tests/fixtures/logs/generated/ddp)
    ("[rank1]: RuntimeError: reward worker returned a malformed batch at step 5", Where(rank=1)),
    # NCCL's own words, behind the prefix and a glog header
    ("[rank0]:[E1128 17:09:10.047451421 ProcessGroupNCCL.cpp:689] [Rank 0] Watchdog caught collective "
     "operation timeout: WorkNCCL(SeqNum=10, OpType=ALLREDUCE, …) ran for 60016 milliseconds", Where(rank=0)),
    ("  what():  [PG ID 0 PG GUID 0(default_pg) Rank 2] Process group watchdog thread terminated",
     Where(rank=2)),
    # Ray's prefix: the process and its node
    ("(WorkerDict pid=3175143, ip=10.49.193.113) torch.OutOfMemoryError: CUDA out of memory.",
     Where(pid=3175143, host="10.49.193.113")),
    # an actor that puts its rank after Ray's name (openrlhf624)
    ("(ReferenceModelRayActor pid=1, ip=10.0.0.2) [rank3]:[E1225 01:00:00.0 ProcessGroupNCCL.cpp:1] x",
     Where(rank=3, pid=1, host="10.0.0.2")),
    # the raylet on a dead worker: the worker's pid and IP, not the raylet's
    ("(raylet) A worker died or was killed while executing a task by an unexpected system error. … "
     "Worker IP address: 192.0.2.2 Worker port: 35113 Worker PID: 16672 Worker exit type: SYSTEM_ERROR",
     Where(pid=16672, host="192.0.2.2")),
    # torchrun's own log line on the worker that failed
    ("E1128 17:06:13.060000 26696 torch/distributed/elastic/multiprocessing/api.py:1002] failed "
     "(exitcode: -9) local_rank: 1 (pid: 27715) of binary: /tmp/fc-torch/bin/python",
     Where(local_rank=1, pid=27715)),
    # Slurm
    ("srun: error: node107: task 3: Exited with exit code 1", Where(rank=3, host="node107")),
    ("srun: error: nid01934: tasks 2,4-5,7: Terminated", Where(host="nid01934")),
    ("slurmstepd: error: *** STEP 32233190.0 ON nid01934 CANCELLED AT 2020-07-01T10:00:00 DUE TO TIME "
     "LIMIT ***", Where(host="nid01934")),
    # relays: pdsh's host, srun --label's task number
    ("node01: [rank5]: RuntimeError: boom", Where(rank=5, host="node01")),
    (" 3: RuntimeError: boom", Where(rank=3)),
    # nothing said
    ("RuntimeError: boom", Where()),
    ("step:4 - train/loss:259.9", Where()),
])
def test_each_grammar_says_where(line, where):
    assert read_line(line) == where


BOX = """torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
ddp_fail.py FAILED
------------------------------------------------------------
Failures:
[1]:
  time      : 2026-11-28_17:06:13
  host      : localhost
  rank      : 0 (local_rank: 0)
  exitcode  : -15 (pid: 27714)  (SIGTERM)
  error_file: <N/A>
  traceback : Signal 15 (SIGTERM) received by PID 27714
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-11-28_17:06:12
  host      : gpu-node-7
  rank      : 9 (local_rank: 1)
  exitcode  : -9 (pid: 27715)  (SIGKILL)
  error_file: <N/A>
  traceback : Signal 9 (SIGKILL) received by PID 27715
============================================================""".splitlines()


def test_torchruns_box_names_its_root_cause_not_the_workers_it_stopped():
    assert root_cause_entry(BOX) == Where(rank=9, local_rank=1, host="gpu-node-7", pid=27715)
    assert read_box_entry(BOX[6:12]) == Where(rank=0, local_rank=0, host="localhost", pid=27714)
    assert root_cause_entry(BOX[:12]) == Where()  # no root cause entry: nothing said


def test_where_reads_as_a_finding_says_it():
    assert Where(rank=9, local_rank=1, host="gpu-node-7").words() == "rank 9 (local rank 1) on gpu-node-7"
    assert Where(rank=1, local_rank=1).words() == "rank 1"
    assert Where(pid=42).words() == "pid 42" and not Where() and Where().words() == ""
