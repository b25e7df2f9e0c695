"""Data shipped inside the package: the real run that ``rlwatch demo`` replays (see SOURCE.md)."""

from __future__ import annotations

import gzip
from importlib.resources import files

DEMO_LOG = "demo_grpo_deepseek7b.log.gz"
DEMO_LABEL = "demo: verl GRPO run, deepseek-llm-7b on GSM8K"


def demo_log() -> bytes:
    """The demo run's log, uncompressed (1.6 MB; read from the installed package, not the repo)."""
    return gzip.decompress(files(__name__).joinpath(DEMO_LOG).read_bytes())
