"""The wheel carries what an installed rlwatch needs outside the code: themes, rules, the demo run."""

import subprocess
import sys
import zipfile


def test_the_wheel_ships_themes_rules_and_the_demo_run(tmp_path):
    from tests.corpus import REPO

    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path),
                           str(REPO)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (wheel,) = tmp_path.glob("rlwatch_tui-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "tui/themes/rlwatch-dark.toml" in names  # top-level themes/ lands inside the package
    assert "tui/rules/default_rules.toml" in names
    assert "tui/data/demo_grpo_deepseek7b.log.gz" in names and "tui/data/SOURCE.md" in names
    entry_points = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt")))
    assert b"rlwatch = tui.cli.main:main" in entry_points
