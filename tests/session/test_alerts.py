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


async def test_hook_receives_the_finding_as_json(tmp_path):
    out = tmp_path / "got.json"
    problem = await run_hook(f"cat > {out}", finding(), "/runs/cola/grpo.log")
    assert problem is None
    got = json.loads(out.read_text())
    assert got["rule"] == "loss-nan" and got["value"] == "nan" and got["run"] == "/runs/cola/grpo.log"


async def test_a_failing_hook_is_one_line_not_an_exception():
    problem = await run_hook("echo boom >&2; exit 3", finding(), "x")
    assert problem == "--on-critical exited with 3: boom"
