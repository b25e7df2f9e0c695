"""The compare screen on real runs: one line per run by step, the legend, the numbers side by
side, the settings that differ, smoothing, and its snapshots at 80×24 and 200×50.

Three real runs of the corpus: 034 and 035 (the GPG recipe with FSDP and with
Megatron, verl ~0.4) and 030 (a PPO run of verl v0.1, whose printed config lost
a line to another process's output). The app is the one ``rlwatch compare``
runs, following the three logs.
"""

from __future__ import annotations

from textual.widgets import DataTable, TabbedContent

from tests.corpus import verl_log
from tests.hostile import ALL, MARKUP, TITLE0, TITLE0_SHOWN, controls_in
from tests.support import dashboard_on, match_snapshot, step_lines, text_of, wait_for
from tui.session.run_session import RunSession
from tui.sources.local_file import LocalFile
from tui.ui.compare_app import CompareApp
from tui.ui.messages import CompareRuns
from tui.ui.screens.compare import CompareScreen
from tui.ui.screens.help import HelpScreen
from tui.ui.widgets.compare_chart import CompareChart
from tui.ui.widgets.compare_legend import CompareLegend
from tui.ui.widgets.compare_tables import CompareNumbers, ConfigDiff

RUNS = {"gpg/fsdp": "034", "gpg/megatron": "035", "ppo/gemma2": "030"}


def sessions() -> list[RunSession]:
    return [RunSession(LocalFile(verl_log(prefix), poll_seconds=0.05), label=label, watch_accelerators=False)
            for label, prefix in RUNS.items()]


async def connected(runs: list[RunSession]) -> list[RunSession]:
    for session in runs:
        await session.connect()
    return runs


async def settled(pilot, app) -> CompareScreen:
    """The compare screen once every run is read to its end and its settings are in."""
    screen = app.screen
    assert isinstance(screen, CompareScreen)
    # 030's step 105 is a line the log ends in the middle of: a followed log waits for its end.
    await wait_for(pilot, lambda: [s.model.last_step for s in screen.sessions] == [210, 105, 104]
                   and all(s.model.config is not None for s in screen.sessions), "the three runs read",
                   timeout=30)
    await pilot.pause(1.5)  # the screen redraws at most once a second
    return screen


async def on_tab(pilot, key: str, tab: str) -> CompareScreen:
    """The compare screen of ``rlwatch compare`` on the three runs, settled, on ``tab``."""
    screen = await settled(pilot, pilot.app)
    await pilot.press(key)
    await wait_for(pilot, lambda: screen.query_one(TabbedContent).active == tab, f"the {tab} tab")
    return screen


def rows(table: DataTable) -> list[list[str]]:
    return [[str(cell) for cell in table.get_row_at(index)] for index in range(table.row_count)]


async def test_the_legend_names_each_run_with_its_letter_and_marker():
    app = CompareApp(await connected(sessions()))
    async with app.run_test(size=(200, 50)) as pilot:
        screen = await settled(pilot, app)
        legend = text_of(screen.query_one(CompareLegend))
    assert "A ⣿ gpg/fsdp" in legend and "B • gpg/megatron" in legend and "C x ppo/gemma2" in legend


def braille(text: str) -> bool:
    return any("\u2800" <= char <= "\u28ff" for char in text)


async def test_the_charts_draw_one_line_per_run_aligned_by_step_with_the_rules_bands():
    app = CompareApp(await connected(sessions()))
    async with app.run_test(size=(200, 50)) as pilot:
        screen = await settled(pilot, app)
        shown = [chart.concept.title for chart in screen.query(CompareChart) if chart.display]
        reward = text_of(screen.query_one("#compare-reward", CompareChart))
        entropy = text_of(screen.query_one("#compare-entropy", CompareChart))
    assert len(shown) == 9 and shown[:2] == ["train reward", "validation score"]
    # Each run in its own marker: A's braille line, B's dots, C's crosses.
    assert braille(reward) and "•" in reward and "x" in reward
    # By step: the x axis runs to the longest run's last step, 210 (the others end near 105).
    assert reward.rstrip().splitlines()[-1].split() == ["0", "100", "210"]  # whole steps
    assert "entropy-low ≥ 0.1" in entropy  # the edge of the rule's band, named


async def test_the_numbers_side_by_side_with_the_best_run_marked():
    app = CompareApp(await connected(sessions()))
    async with app.run_test(size=(200, 50)) as pilot:
        screen = await on_tab(pilot, "2", "numbers")
        table = rows(screen.query_one(CompareNumbers))
    labels = [row[0].strip() for row in table]
    at = labels.index("train reward last")
    assert labels[at:at + 3] == ["train reward last", "best", "mean"]
    assert table[at][1:] == ["0.937", "0.987", "0.713"]
    assert table[at + 1][1:] == ["0.956", "0.99 ▲", "0.738"]  # higher is better: B
    at = labels.index("s/it last")
    assert table[at + 1][1:] == ["207", "190 ▼", "—"]  # lower is better: B (C logs no step time)
    # Loss and entropy have no better direction: last and mean only.
    at = labels.index("entropy last")
    assert labels[at + 1] == "mean"


async def test_the_settings_that_differ_set_by_hand_first():
    app = CompareApp(await connected(sessions()))
    async with app.run_test(size=(200, 50)) as pilot:
        screen = await on_tab(pilot, "3", "settings")
        diff = screen.query_one(ConfigDiff)
        table = rows(diff)
        keys = [key.value for key in diff.rows]
    assert keys == diff.differing and len(keys) > 100
    by_key = {key: row[1:] for key, row in zip(keys, table)}
    # A name too long for its column keeps its end, the setting itself.
    long = keys.index("actor_rollout_ref.actor.megatron.virtual_pipeline_model_parallel_size")
    assert table[long][0] == "…" + keys[long][-63:]
    assert by_key["data.train_batch_size"] == ["1024", "1024", "512"]
    assert by_key["algorithm.adv_estimator"] == ["gpg", "gpg", "gae"]
    # The keys a launch command set come first; the rest follow by name.
    assert keys.index("data.train_batch_size") < keys.index("actor_rollout_ref.actor.megatron.seed")
    assert by_key["actor_rollout_ref.actor.megatron.seed"] == ["—", "42", "—"]


async def test_enter_on_a_setting_shows_its_whole_value_in_each_run():
    app = CompareApp(await connected(sessions()))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await on_tab(pilot, "3", "settings")
        diff = screen.query_one(ConfigDiff)
        diff.focus()
        diff.move_cursor(row=diff.differing.index("actor_rollout_ref.model.path"))
        await pilot.press("enter")
        await wait_for(pilot, lambda: app._notifications, "the setting's values")
        shown = list(app._notifications)[-1].message
    fsdp = screen.sessions[0].model.config.values["actor_rollout_ref.model.path"]
    assert len(fsdp) > 40 and shown.splitlines() == [
        "actor_rollout_ref.model.path", f"A  {fsdp}", "B  /workspace/verl/Qwen/Qwen2-7B-Instruct",
        "C  sft_model_path/global_step_58"]


async def test_smoothing_keys_change_the_weight_and_the_curve():
    app = CompareApp(await connected(sessions()))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settled(pilot, app)
        reward = screen.query_one("#compare-reward", CompareChart)
        raw = text_of(reward)
        await pilot.press("e")
        assert screen.weight == 0.6 and text_of(reward) != raw
        for _ in range(6):
            await pilot.press("plus")
        assert screen.weight == 0.99
        await pilot.press("minus", "e")
        assert screen.weight == 0.0 and text_of(reward) == raw
        await pilot.press("e")
        assert screen.weight == 0.89  # back at the last weight chosen
        assert "smoothing 0.89" in text_of(screen.query_one("#title"))


async def test_charts_that_do_not_fit_come_a_page_at_a_time():
    app = CompareApp(await connected(sessions()))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await settled(pilot, app)
        shown = lambda: [c.concept.id for c in screen.query(CompareChart) if c.display]  # noqa: E731
        assert shown() == ["reward"] and "chart 1 of 12" in text_of(screen.query_one("#title"))
        await pilot.press("right_square_bracket")
        assert shown() == ["val"]
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert shown() == ["memory"]  # round to the last
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the keys of the screen")
        assert "aligned by step" in " ".join(text_of(w) for w in app.screen.query("*"))
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen, "the compare screen again")


async def test_the_dashboard_app_opens_the_screen_on_a_compare_runs_message():
    """The seam for the fleet view: marked sessions, one message, the compare screen."""
    others = await connected(sessions()[1:])
    app = dashboard_on(LocalFile(verl_log("034"), poll_seconds=0.05), label="gpg/fsdp",
                       watch_accelerators=False)
    async with app.run_test(size=(120, 40)) as pilot:
        for session in others:
            app.run_worker(session.follow())  # what the fleet view does with its sessions
        app.post_message(CompareRuns([app.session]))  # one run: nothing to compare
        await wait_for(pilot, lambda: app._notifications, "a word on why nothing opened")
        assert app.screen is app.dashboard
        app.post_message(CompareRuns([app.session, *others]))
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen), "the compare screen")
        screen = await settled(pilot, app)
        assert screen.names == ["gpg/fsdp", "gpg/megatron", "ppo/gemma2"]
        styles = [style for _, _, style, _ in screen.query_one(CompareLegend).entries]
        await pilot.press("t")  # the next theme: the runs' colours are the theme's
        await wait_for(pilot, lambda: [style for _, _, style, _ in screen.query_one(CompareLegend).entries]
                       != styles, "the runs in the new theme's colours")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is app.dashboard, "the dashboard again")


async def test_the_title_says_each_runs_state_a_crash_among_them(tmp_path):
    """Three real runs: one that crashed out of memory after 4 steps (corpus 018's traceback
    after 032's first steps), a whole finished one (034), one still running."""
    crashed, running = tmp_path / "crashed.log", tmp_path / "running.log"
    crashed.write_bytes(b"".join(step_lines(4)) + verl_log("018").read_bytes())
    running.write_bytes(b"".join(step_lines(6)))
    runs = [RunSession(LocalFile(path, poll_seconds=0.05), label=label, watch_accelerators=False)
            for path, label in ((crashed, "sw/crashed"), (verl_log("034"), "gpg/fsdp"), (running, "sw/running"))]
    app = CompareApp(await connected(runs))
    async with app.run_test(size=(200, 30)) as pilot:
        await wait_for(pilot, lambda: [s.model.last_step for s in runs] == [4, 210, 6], "the runs read", 30)
        await pilot.pause(1.5)
        title = text_of(app.screen.query_one("#title"))
    assert "A 4 crashed" in title and "B 210 finished" in title and "C 6 running" in title


async def snapshot(size: tuple[int, int], name: str) -> None:
    app = CompareApp(await connected(sessions()))
    async with app.run_test(size=size) as pilot:
        await settled(pilot, app)
        svg = app.export_screenshot(title="rlwatch compare")
    match_snapshot(name, svg)


async def test_snapshot_80x24():
    await snapshot((80, 24), "compare_80x24")


async def test_snapshot_200x50():
    await snapshot((200, 50), "compare_200x50")


async def test_hostile_names_and_settings_are_shown_inert(tmp_path):
    """Log text drives nothing: a run named with terminal sequences, settings carrying them."""
    runs = []
    for index in range(2):
        log = tmp_path / f"run{index}.log"
        config = {"trainer": {"experiment_name": f"exp{index}{ALL}"}, "data": {"train_batch_size": index}}
        log.write_bytes(f"{config!r}\n".encode() + b"".join(step_lines(3)))
        runs.append(RunSession(LocalFile(log), label=f"run{index}{TITLE0}", watch_accelerators=False))
    app = CompareApp(await connected(runs))
    async with app.run_test(size=(200, 50)) as pilot:
        await wait_for(pilot, lambda: all(s.model.config for s in runs), "the settings read")
        await pilot.pause(1.5)
        legend = text_of(app.screen.query_one(CompareLegend))
        await pilot.press("3")
        await pilot.pause(0.5)
        diff = app.screen.query_one(ConfigDiff)
        cells = [str(cell) for index in range(diff.row_count) for cell in diff.get_row_at(index)]
    assert TITLE0_SHOWN in legend and not controls_in(legend)
    assert "trainer.experiment_name" in [key.value for key in diff.rows]
    assert not controls_in("".join(cells))
    at = cells.index("trainer.experiment_name")
    # Long values keep their start and their end: where runs differ, and the markup as text.
    assert [cell[:12] for cell in cells[at + 1:at + 3]] == [f"exp{index}{TITLE0_SHOWN}"[:12] for index in range(2)]
    assert all(cell.endswith(MARKUP[-8:]) for cell in cells[at + 1:at + 3])
