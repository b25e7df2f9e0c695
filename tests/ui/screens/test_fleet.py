"""The fleet screen, driven through the real app on real logs: a row per run sorted worst first,
live; enter opens a run's dashboard and escape comes back; a run that cannot be read says why on
its row; it fits 80×24; marked runs are handed on to be compared."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest
from textual.widgets import DataTable

from tests.sshd import ClientHome, Sshd, find_sshd, free_port
from tests.support import healthy_then_nan, step_lines, touch, wait_for
from tui.cli.fleet import RunOptions, fleet_runs, listed_runs
from tui.rules.rule_file import load_rules
from tui.sources.ssh.pool import ConnectionPool
from tui.ui.fleet_app import FleetApp
from tui.ui.messages import CompareRuns
from tui.ui.screens.dashboard import DashboardScreen
from tui.ui.screens.fleet import FleetScreen, fitting

TRACEBACK = (b"Traceback (most recent call last):\n  File \"main_ppo.py\", line 10, in <module>\n"
             b"    main()\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")


def fleet_folder(tmp_path: Path) -> Path:
    """One run in each state, as real trainers leave their logs."""
    runs = tmp_path / "runs"
    for name in ("crashed", "stalled", "critical", "warning", "running", "finished"):
        (runs / name).mkdir(parents=True)
    (runs / "crashed" / "train.log").write_bytes(b"".join(step_lines(4)) + TRACEBACK)
    (runs / "stalled" / "train.log").write_bytes(b"".join(step_lines(5)))
    touch(runs / "stalled" / "train.log", "3 hours ago")
    log, nan_line = healthy_then_nan(runs / "critical")
    log.write_bytes(log.read_bytes() + nan_line)
    # The KL leaves its band at step 11: a warning (the clip fraction, below its band from
    # the first judged step, is a note of the run).
    (runs / "warning" / "train.log").write_bytes(b"".join(step_lines(12)))
    (runs / "running" / "train.log").write_bytes(b"".join(step_lines(2)))
    (runs / "finished" / "train.log").write_bytes(b"Total training steps: 3\n" + b"".join(step_lines(3)))
    return runs


class ComparingApp(FleetApp):
    """The real fleet app, keeping the compare requests it receives."""

    compared: list[list] = []

    def on_compare_runs(self, message: CompareRuns) -> None:
        self.compared.append(message.sessions)


async def fleet_app(words: list[str], app: type[FleetApp] = FleetApp,
                    pool: ConnectionPool | None = None) -> tuple[FleetApp, ConnectionPool]:
    """The app as ``rlwatch WORDS…`` makes it: a glob's row becomes its runs on the screen."""
    pool = pool or ConnectionPool()
    runs = fleet_runs(listed_runs(words), pool, RunOptions(None, load_rules()))
    return app(runs), pool


def rows(app: FleetApp) -> list[list[str]]:
    table = app.fleet.query_one(DataTable)
    return [[str(cell) for cell in table.get_row_at(row)] for row in range(table.row_count)]


def column(app: FleetApp, title: str) -> list[str]:
    table = app.fleet.query_one(DataTable)
    at = [str(c.label) for c in table.columns.values()].index(title)
    return [row[at] for row in rows(app)]


async def closed(app: FleetApp, pool: ConnectionPool) -> None:
    await asyncio.gather(*(run.close() for run in app.runs))
    await pool.close()


async def test_rows_sort_worst_first_and_follow_the_runs_live(tmp_path):
    runs = fleet_folder(tmp_path)
    app, pool = await fleet_app([str(runs / "*"), str(tmp_path / "gone")])
    try:
        async with app.run_test(size=(120, 30)) as pilot:
            # Every run read to its end and its row drawn from all of it (a crashed run's
            # row names its exception once its failure is read, after its lines).
            await wait_for(pilot, lambda: len(rows(app)) == 7 and app.up_to_date and not app.loading,
                           "every row", timeout=15)
            assert column(app, "state") == ["crashed", "unreachable", "stalled", "critical", "warning",
                                            "running", "finished"]
            names = column(app, "run")  # the long name of the missing run cut in its middle
            assert names[0] == "runs/crashed" and names[1].endswith("/gone") and \
                names[1].startswith(tmp_path.name[:8])
            assert names[2:] == ["runs/stalled", "runs/critical", "runs/warning", "runs/running",
                                 "runs/finished"]
            assert column(app, "step") == ["4", "-", "5", "31", "12", "2", "3/3"]
            worst = column(app, "worst finding")
            assert worst[0].startswith("crash: OutOfMemoryError: CUDA out of memory")
            assert "no such file or directory" in worst[1]
            assert "loss-nan" in worst[3] and worst[5] == ""
            assert app.title.startswith("rlwatch 7 runs: 1 crashed 1 unreachable")
            # The running run's loss goes nan: it rises to the critical rows, the cursor
            # staying on the run it was on.
            await pilot.press("down", "down", "down", "down")
            assert app.fleet.current.name == "runs/warning"
            _, nan_line = healthy_then_nan(tmp_path)
            with open(runs / "running" / "train.log", "ab") as handle:
                handle.write(nan_line)
            await wait_for(pilot, lambda: column(app, "state").count("critical") == 2, "the nan", 15)
            assert column(app, "run")[3:5] == ["runs/critical", "runs/running"]
            assert app.fleet.current.name == "runs/warning"
    finally:
        await closed(app, pool)


async def test_enter_opens_the_runs_dashboard_and_escape_comes_back(tmp_path):
    runs = fleet_folder(tmp_path)
    app, pool = await fleet_app([str(runs / "critical"), str(runs / "running"), str(tmp_path / "gone")])
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: column(app, "state") == ["unreachable", "critical", "running"],
                           "the rows", timeout=15)
            await pilot.press("enter")  # the run that cannot be read: it says why, and stays
            assert isinstance(app.screen, FleetScreen)
            await pilot.press("s")  # a run's keys do nothing on the fleet
            assert isinstance(app.screen, FleetScreen)
            await pilot.press("down", "enter")
            assert isinstance(app.screen, DashboardScreen) and app.short_name == "runs/critical"
            await wait_for(pilot, lambda: app.session.model.last_step == 31, "the run shown")
            assert app.screen.model is app.runs[0].session.model
            await pilot.press("s")
            assert type(app.screen).__name__ == "StepsScreen"
            await pilot.press("escape", "escape")
            assert isinstance(app.screen, FleetScreen) and app.fleet.current.name == "runs/critical"
            await pilot.press("down", "enter")
            assert isinstance(app.screen, DashboardScreen) and app.session.model.last_step == 2
            await pilot.press("s")  # this run's own steps, not the first run's kept screen
            await wait_for(pilot, lambda: type(app.screen).__name__ == "StepsScreen", "the steps")
            assert app.screen.query_one("#title").render().plain.startswith("Steps  2 ")
            await pilot.press("escape", "escape")
            assert isinstance(app.screen, FleetScreen)
    finally:
        await closed(app, pool)


async def test_at_80_columns_the_state_name_step_and_finding_stay(tmp_path):
    assert [c.field for c in fitting(80)] == ["mark", "state", "name", "step", "reward", "worst"]
    assert len(fitting(200)) == 12
    runs = fleet_folder(tmp_path)
    app, pool = await fleet_app([str(runs / "crashed"), str(runs / "running")])
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: column(app, "state") == ["crashed", "running"], "rows", 15)
            table = app.fleet.query_one(DataTable)
            assert table.virtual_size.width <= 80
            await pilot.resize_terminal(160, 24)
            await wait_for(pilot, lambda: len(table.columns) == 12, "the wide layout")
            assert column(app, "host") == ["local", "local"]
    finally:
        await closed(app, pool)


async def test_space_marks_runs_and_c_hands_them_on_to_compare(tmp_path):
    runs = fleet_folder(tmp_path)
    app, pool = await fleet_app([str(runs / name) for name in ("critical", "warning", "running")],
                                ComparingApp)
    try:
        async with app.run_test(size=(100, 24)) as pilot:
            await wait_for(pilot, lambda: column(app, "state") == ["critical", "warning", "running"],
                           "rows", 15)
            await pilot.press("space", "down", "space")  # critical and running
            assert column(app, "") == ["●", " ", "●"]
            await pilot.press("c")
            await pilot.pause()
            (sessions,) = app.compared
            assert [session.model.last_step for session in sessions] == [31, 2]
    finally:
        await closed(app, pool)


@pytest.mark.skipif(find_sshd() is None, reason="OpenSSH's sshd is not installed")
async def test_a_host_that_is_down_shows_on_its_rows_while_the_others_load(tmp_path, monkeypatch):
    """Two runs on a real sshd, two on a host whose port nobody listens on, one local: the down
    host's rows say why, the others fill in, and the host is asked once, not once per run."""
    home = ClientHome(tmp_path / "home")
    box = Sshd(tmp_path / "box", [home.public_key]).start()
    try:
        home.add_host("gpu", box.port)
        home.trust(box.known_hosts_line())
        home.add_host("dead", free_port())
        monkeypatch.setenv("HOME", str(home.path))
        monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
        runs = fleet_folder(tmp_path)
        app, pool = await fleet_app([f"gpu:{runs}/running", f"gpu:{runs}/critical",
                                     f"dead:{runs}/warning", f"dead:{runs}/finished",
                                     str(runs / "stalled")])
        try:
            async with app.run_test(size=(160, 30)) as pilot:
                await wait_for(pilot, lambda: len(rows(app)) == 5 and "opening" not in column(app, "state")
                               and "-" not in column(app, "step")[2:], "every row", 20)
                assert list(zip(column(app, "state"), column(app, "host"))) == [
                    ("unreachable", "dead"), ("unreachable", "dead"), ("stalled", "local"),
                    ("critical", "gpu"), ("running", "gpu")]
                assert all("dead: cannot connect" in why for why in column(app, "worst finding")[:2])
                assert column(app, "step")[2:] == ["5", "31", "2"]
                assert pool.logins == 2  # gpu once, dead once for both its runs
        finally:
            await closed(app, pool)
    finally:
        box.stop()


async def test_the_palette_offers_no_run_screens_on_the_fleet(tmp_path):
    """ctrl+p's run commands (steps, charts…) act on the shown run: on the fleet there is none."""
    runs = fleet_folder(tmp_path)
    app, pool = await fleet_app([str(runs / "critical"), str(runs / "running")])
    try:
        async with app.run_test(size=(100, 24)) as pilot:
            await wait_for(pilot, lambda: column(app, "state") == ["critical", "running"], "rows", 15)
            await pilot.press("ctrl+p", *"steps", "enter")
            await pilot.pause(0.3)
            await pilot.press("escape")
            await wait_for(pilot, lambda: isinstance(app.screen, FleetScreen), "the fleet, still")
            await pilot.press("enter", "ctrl+p", *"steps")
            await pilot.pause(0.3)
            await pilot.press("enter")  # on a run's dashboard the palette opens its steps
            await wait_for(pilot, lambda: type(app.screen).__name__ == "StepsScreen", "the steps")
    finally:
        await closed(app, pool)


async def test_a_glob_on_a_box_that_never_answers_keeps_no_other_row_waiting(tmp_path, monkeypatch):
    """A box that takes the connection and says nothing (hung, or a firewall that swallows it)
    costs its glob's row the login's timeout, not the screen: the other runs show meanwhile."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()  # the kernel completes the handshake; no SSH banner ever comes
    home = ClientHome(tmp_path / "home")
    home.add_host("hung", silent.getsockname()[1])
    monkeypatch.setenv("HOME", str(home.path))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    runs = fleet_folder(tmp_path)
    app, pool = await fleet_app([f"hung:{runs}/r*", str(runs / "critical")])
    try:
        async with app.run_test(size=(160, 30)) as pilot:
            await wait_for(pilot, lambda: column(app, "state") == ["critical", "opening"], "rows", 10)
            assert column(app, "run") == ["critical", "r*"]  # the folder they share dropped
    finally:
        await closed(app, pool)
        silent.close()


@pytest.mark.skipif(find_sshd() is None, reason="OpenSSH's sshd is not installed")
async def test_a_glob_on_a_host_that_is_down_becomes_its_runs_when_the_host_comes_up(tmp_path, monkeypatch):
    home = ClientHome(tmp_path / "home")
    port = free_port()
    home.add_host("late", port)
    monkeypatch.setenv("HOME", str(home.path))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    runs = fleet_folder(tmp_path)
    app, pool = await fleet_app([f"late:{runs}/r*", str(runs / "critical")],
                                pool=ConnectionPool(retry_s=0.1))
    box = None
    try:
        async with app.run_test(size=(160, 30)) as pilot:
            await wait_for(pilot, lambda: column(app, "state") == ["unreachable", "critical"], "rows", 15)
            assert column(app, "run") == ["r*", "critical"]
            assert "late: cannot connect" in column(app, "worst finding")[0]
            box = Sshd(tmp_path / "box", [home.public_key], port=port)
            home.trust(box.known_hosts_line())
            box.start()
            await wait_for(pilot, lambda: column(app, "run") == ["critical", "running"]
                           and column(app, "step") == ["31", "2"], "the glob's run", 20)
            assert column(app, "host") == ["local", "late"]
    finally:
        await closed(app, pool)
        if box is not None:
            box.stop()


async def test_marked_runs_open_the_compare_screen_and_escape_comes_back(tmp_path):
    from tui.ui.screens.compare import CompareScreen

    runs = fleet_folder(tmp_path)
    app, pool = await fleet_app([str(runs / name) for name in ("critical", "warning", "running")])
    try:
        async with app.run_test(size=(120, 30)) as pilot:
            await wait_for(pilot, lambda: column(app, "state") == ["critical", "warning", "running"],
                           "rows", 15)
            await pilot.press("space", "space", "c")  # critical and warning
            await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen), "the compare screen")
            await pilot.pause(0.5)
            await pilot.press("escape")
            await wait_for(pilot, lambda: isinstance(app.screen, FleetScreen), "the fleet again")
    finally:
        await closed(app, pool)


async def test_a_slurm_job_on_a_login_node_that_is_down_says_so_on_its_row(tmp_path, monkeypatch):
    """A Slurm job's row is its login node's: named by it, and unreachable with its reason."""
    home = ClientHome(tmp_path / "home")
    home.add_host("dead", free_port())
    monkeypatch.setenv("HOME", str(home.path))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    runs = fleet_folder(tmp_path)
    app, pool = await fleet_app(["slurm://dead/812", str(runs / "stalled")])
    try:
        async with app.run_test(size=(160, 30)) as pilot:
            await wait_for(pilot, lambda: len(rows(app)) == 2 and "opening" not in column(app, "state"),
                           "both rows", 20)
            assert list(zip(column(app, "state"), column(app, "host"))) == [
                ("unreachable", "dead"), ("stalled", "local")]
            assert "dead: cannot connect" in column(app, "worst finding")[0]
    finally:
        await closed(app, pool)


@pytest.mark.skipif(find_sshd() is None, reason="OpenSSH's sshd is not installed")
async def test_a_run_read_to_its_end_gets_its_row_then_not_at_the_next_round(tmp_path, monkeypatch):
    # Rows are redrawn once a second for a growing log; a run just read to its end is what
    # the user waits on (twenty runs opening), so its row comes at once. With the round a
    # minute long, only that can draw these runs: over SSH they are read well after the
    # screen's first rows.
    monkeypatch.setattr("tui.ui.fleet_app.ROWS_SECONDS", 60.0)
    monkeypatch.setattr("tui.ui.fleet_app.JUDGE_IDLE_SECONDS", 60.0)  # nor the idle round
    home = ClientHome(tmp_path / "home")
    box = Sshd(tmp_path / "box", [home.public_key]).start()
    try:
        home.add_host("gpu", box.port)
        home.trust(box.known_hosts_line())
        monkeypatch.setenv("HOME", str(home.path))
        monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
        runs = fleet_folder(tmp_path)
        app, pool = await fleet_app([f"gpu:{runs}/crashed", f"gpu:{runs}/finished"])
        try:
            async with app.run_test(size=(120, 30)) as pilot:
                # Both read to their end: a row drawn from a run's lines before its end was
                # known is up to date too, and a line written then is read with the end.
                await wait_for(pilot, lambda: app.up_to_date and not app.loading
                               and column(app, "state") == ["crashed", "finished"], "both rows judged", 15)
                assert column(app, "step") == ["4", "3/3"]
                assert column(app, "worst finding")[0].startswith("crash: ")
                # A change after that waits for the next round, and the rows say they are
                # not up to date until then.
                with open(runs / "finished" / "train.log", "ab") as handle:
                    handle.write(step_lines(4)[-1])
                await wait_for(pilot, lambda: not app.up_to_date, "the change noticed", 15)
        finally:
            await closed(app, pool)
    finally:
        box.stop()
