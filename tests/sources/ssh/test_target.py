"""Parsing what the user typed into a remote target."""

from tui.sources.ssh.target import RemoteTarget, parse_target


def test_scp_style_with_and_without_user():
    assert parse_target("alice@gpu-host:/runs/cola") == RemoteTarget("gpu-host", "/runs/cola", "alice")
    assert parse_target("gpu:runs/cola") == RemoteTarget("gpu", "runs/cola")


def test_url_style_with_port():
    assert parse_target("ssh://bob@10.0.0.2:2222/runs/x") == RemoteTarget("10.0.0.2", "/runs/x", "bob", 2222)
    assert parse_target("ssh://gpu/runs/x") == RemoteTarget("gpu", "/runs/x")


def test_local_paths_stay_local(tmp_path):
    weird = tmp_path / "a:b"
    weird.mkdir()
    assert parse_target(str(weird)) is None
    assert parse_target("/runs/cola") is None and parse_target("runs/cola") is None
    assert parse_target("C:/runs") is None
