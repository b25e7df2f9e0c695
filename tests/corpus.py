"""Where the real-log corpus lives: ``tests/fixtures/corpus`` (verl_logs/ and smi/, each with the
MANIFEST.md that names every sample's source)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "fixtures" / "corpus"
VERL_LOGS = CORPUS / "verl_logs"


def verl_log(prefix: str) -> Path:
    """The corpus log whose file name starts with ``prefix`` (e.g. ``"032"``)."""
    matches = sorted(VERL_LOGS.glob(f"{prefix}_*.log"))
    assert len(matches) == 1, f"expected one corpus log for {prefix!r}, found {matches}"
    return matches[0]


def all_verl_logs() -> list[Path]:
    """Every log in the corpus."""
    return sorted(VERL_LOGS.glob("*.log"))


KIN_LOGS = REPO / "tests" / "fixtures" / "logs" / "kin"


def kin_log(name: str) -> Path:
    """A sample of the kin trainers' corpus (tests/fixtures/logs/kin) by file name."""
    path = KIN_LOGS / name
    assert path.is_file(), f"no kin sample {name!r}"
    return path


def all_kin_logs() -> list[Path]:
    """Every log of the kin corpus."""
    return sorted(KIN_LOGS.glob("*.log"))


def rlwatch_key(fmt: str, printed: str) -> str:
    """The key rlwatch stores for a metric as a kin trainer printed it: NeMo-RL prints
    display names ("Avg Reward") for keys of its own ("train/reward")."""
    from tui.parsers.kin import nemo_rl

    if fmt != "nemo-rl-blocks":
        return printed
    if printed in nemo_rl._VALIDATION_KEYS:
        return nemo_rl._VALIDATION_KEYS[printed]
    if printed == "Total step time":
        return "timing/train/total_step_time"
    return nemo_rl._TRAIN_KEYS[printed]
