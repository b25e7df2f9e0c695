"""The repository stands alone: a fresh clone with nothing beside it runs its tests and benchmarks.

The real-log corpus once lived in a folder beside the checkout that only this project's own
machines had; on anyone else's clone the suite failed by the hundred. Its samples now live in
``tests/fixtures/corpus`` and the seed-001 workload's generator in ``bench/``; these tests keep
it so, by reading every tracked file (``.ci/run`` proves the rest by running the suite from a
clone in a folder of its own).
"""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.corpus import CORPUS, REPO, VERL_LOGS

# A path to the old folder beside the checkout, relative or absolute, or one built from parts
# (the folder's name quoted next to a ``/``). This file names it only through FOLDER, so that
# the check reads this file too.
FOLDER = b"shar" + b"ed"
OUTSIDE = re.compile(rb"""(?:\.\.|/work)/shared\b|["']shared["']\s*/|/\s*["']shared["']""")


def tracked_files() -> list[str]:
    done = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return [name for name in done.stdout.decode().split("\0") if name]


def test_no_tracked_file_reads_or_names_a_folder_beside_the_checkout():
    names = tracked_files()
    assert "tests/corpus.py" in names  # the listing is the checkout's
    offending = []
    for name in names:
        path = REPO / name
        if not path.is_file():  # deleted in the work tree, not yet in the index
            continue
        for number, line in enumerate(path.read_bytes().splitlines(), 1):
            if OUTSIDE.search(line):
                offending.append(f"{name}:{number}: {line.decode(errors='replace').strip()[:120]}")
    assert not offending, "paths outside the repository:\n" + "\n".join(offending)


@pytest.mark.parametrize("line", [
    b'CORPUS = REPO.parent / "%s" / "corpus"',
    b"LOG = Path('..') / '%s' / 'x.log'",
    b"every log in `../%s/corpus/verl_logs`",
    b"from /work/%s/bench/chatter_log.py",
])
def test_the_check_catches_each_way_of_naming_it(line):
    assert OUTSIDE.search(line % FOLDER)


@pytest.mark.parametrize("line", [
    b"one SSH connection per host shared by its runs",
    b'(LLMRayActor pid=1) File "/cpfs01/shared/public/vllm_engine.py"',
    b"the shared indentation goes first",
])
def test_the_check_leaves_prose_and_log_text_alone(line):
    assert not OUTSIDE.search(line)


def test_the_corpus_is_inside_the_repository_and_tracked():
    assert CORPUS.is_relative_to(REPO)
    names = set(tracked_files())
    samples = [path for path in CORPUS.rglob("*") if path.is_file()]
    assert len(list(VERL_LOGS.glob("*.log"))) >= 30
    untracked = [str(path.relative_to(REPO)) for path in samples if str(path.relative_to(REPO)) not in names]
    assert not untracked, f"{len(untracked)} corpus files git does not track, e.g. {untracked[:3]}"


@pytest.mark.parametrize("folder", ["verl_logs", "smi"])
def test_every_corpus_sample_is_named_in_its_manifest(folder):
    """Every sample's source is on record: a sample the MANIFEST does not name has none."""
    manifest = (CORPUS / folder / "MANIFEST.md").read_text(encoding="utf-8")
    samples = [path for path in (CORPUS / folder).rglob("*") if path.is_file() and path.name != "MANIFEST.md"]
    assert samples
    unnamed = [str(path.relative_to(CORPUS)) for path in samples if path.name not in manifest]
    assert not unnamed, f"samples with no source in {folder}/MANIFEST.md: {unnamed}"


def test_the_benchmarks_build_their_workloads_from_the_repository():
    from bench import check_vs_grep

    assert check_vs_grep.CHATTER.is_file() and check_vs_grep.CHATTER.is_relative_to(REPO)
    assert check_vs_grep.REAL_LOG.is_file() and check_vs_grep.REAL_LOG.is_relative_to(REPO)
