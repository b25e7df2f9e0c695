"""Scratch folders: removed by their owner normally, by ``remove_all`` when rlwatch must end at once."""

import gc
from pathlib import Path

from tui import scratch


def test_remove_all_takes_the_folders_still_alive_and_only_those():
    with scratch.scratch_dir("rlwatch-test-") as done:
        pass  # its owner removed it
    kept = scratch.scratch_dir("rlwatch-test-")
    (Path(kept.name) / "events.out.tfevents.1").write_bytes(b"x")
    assert not Path(done).exists() and Path(kept.name).exists()
    scratch.remove_all()
    assert not Path(kept.name).exists()


def test_a_folder_dropped_by_its_owner_leaves_the_registry():
    folder = scratch.scratch_dir("rlwatch-test-")
    path = Path(folder.name)
    del folder
    gc.collect()
    assert not path.exists() and path not in scratch._alive
