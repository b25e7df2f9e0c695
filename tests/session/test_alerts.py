"""Critical alerts: once per new critical finding; the hook gets the finding as JSON."""

import json

from tui.rules.findings import Finding, Severity
from tui.session.alerts import CriticalAlerts, run_hook


def finding(rule="loss-nan", severity=Severity.CRITICAL, metric="critic/vf_loss", count=1):
    made = Finding(rule, severity, metric)
    for _ in range(count):
        made.add_hit(1, float("nan"), "critic/vf_loss = nan")
    return made


def test_each_critical_finding_alerts_once_and_warnings_never():
    alerts = CriticalAlerts()
    assert [f.metric for f in alerts.new([finding(), finding(severity=Severity.WARNING, rule="kl-high")])] \
        == ["critic/vf_loss"]
    assert alerts.new([finding(count=5)]) == []  # the same finding, grown
    assert len(alerts.new([finding(metric="critic/grad_norm")])) == 1
    alerts.reset()
    assert len(alerts.new([finding()])) == 1


def test_a_stall_alerts_once_while_its_seconds_grow_and_again_after_a_later_step():
    alerts = CriticalAlerts()

    def stalled(after_step: int, quiet_s: float) -> Finding:
        made = Finding("stalled", Severity.CRITICAL)
        made.add_hit(after_step, quiet_s, f"no new step for {quiet_s:.0f} s")
        return made

    assert len(alerts.new([stalled(40, 700.0)])) == 1
    assert alerts.new([stalled(40, 705.0)]) == []  # the same stall, judged 5 s later
    assert len(alerts.new([stalled(90, 650.0)])) == 1  # the run went on, then stalled again


def test_a_crash_read_half_written_then_whole_alerts_once():
    """The follower read the traceback's frames first (a plain traceback, named by its last
    frame), then its last line (out of memory): the block starts at the same byte, one crash."""
    alerts = CriticalAlerts()

    def crash(kind: str, exception: str) -> Finding:
        made = Finding("crash", Severity.CRITICAL, exception=exception, offset=16381)
        made.add_hit(12, kind, exception)
        return made

    assert len(alerts.new([crash("traceback", 'File "fsdp_workers.py", line 782, in update')])) == 1
    assert alerts.new([crash("oom", "torch.OutOfMemoryError: CUDA out of memory.")]) == []


async def test_hook_receives_the_finding_as_json(tmp_path):
    out = tmp_path / "got.json"
    problem = await run_hook(f"cat > {out}", finding(), "/runs/cola/grpo.log")
    assert problem is None
    got = json.loads(out.read_text())
    assert got["rule"] == "loss-nan" and got["value"] == "nan" and got["run"] == "/runs/cola/grpo.log"


async def test_a_failing_hook_is_one_line_not_an_exception():
    problem = await run_hook("echo boom >&2; exit 3", finding(), "x")
    assert problem == "--on-critical exited with 3: boom"
