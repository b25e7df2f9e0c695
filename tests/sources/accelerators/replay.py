"""Fake ``nvidia-smi`` / ``npu-smi`` / ``rocm-smi`` programs that replay recorded real output.

``install(bin_dir, tool, config)`` writes an executable script named after the
tool; put ``bin_dir`` first on PATH and the pollers run it as they would the
real program (a real process, real pipes, real exit statuses). The output is
taken from the corpus or the fixtures, never made up:

* nvidia-smi answers ``--query-gpu=<fields>`` / ``--query-compute-apps=<fields>``
  from a recorded ``--format=csv`` capture (header row and all; or a noheader
  capture with ``gpu_fields``/``app_fields`` naming its columns), picking the
  requested columns by name and dropping units for ``nounits``; with ``-l N``
  it prints the rows every N seconds until killed.
* npu-smi and rocm-smi print a recorded file for each argv they know.
* ``fail``: print a recorded failure message and exit with the tool's status
  (9 for nvidia-smi's "couldn't communicate with the driver"), after
  ``rows_then_fail`` stream rows when set (a driver that dies mid-run).
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
_ALIASES = {"used_memory": "used_gpu_memory"}
_UNIT = re.compile(r"^(.*?\S)\s+(MiB|W|%|MHz)$")


def install(bin_dir: Path, tool: str, config: dict) -> Path:
    """Write ``bin_dir/tool``, an executable that replays per ``config``."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / tool
    script.write_text(f"#!{sys.executable}\n"
                      f"import sys\nsys.path.insert(0, {str(REPO)!r})\n"
                      "from tests.sources.accelerators.replay import main\n"
                      f"sys.exit(main({tool!r}, sys.argv[1:], {config!r}))\n")
    script.chmod(0o755)
    return script


def _select(capture: str, query: str, nounits: bool, fields: list[str] | None = None) -> list[str]:
    """The requested columns of a recorded capture, as noheader rows. The capture
    has a header row (``--format=csv``), or ``fields`` says what it was asked for."""
    lines = [line for line in Path(capture).read_text().splitlines() if line.strip()]
    if fields is None:
        header = [re.sub(r"\s*\[[^\]]*\]$", "", cell.strip()) for cell in lines.pop(0).split(", ")]
    else:
        header = fields
    wanted = query.split(",")
    rows = []
    for line in lines:
        row = dict(zip(header, (cell.strip() for cell in line.split(", "))))
        cells = [row[name] if name in row else row[_ALIASES[name]] for name in wanted]
        if nounits:
            cells = [match.group(1) if (match := _UNIT.match(cell)) else cell for cell in cells]
        rows.append(", ".join(cells))
    return rows


def _fail(config: dict) -> int:
    sys.stdout.write(Path(config["fail"]).read_text())
    sys.stdout.flush()
    return config.get("fail_status", 9)


def _nvidia_smi(argv: list[str], config: dict) -> int:
    options = dict(arg.split("=", 1) for arg in argv if arg.startswith("--") and "=" in arg)
    nounits = "nounits" in options.get("--format", "")
    if "fail" in config and "rows_then_fail" not in config:
        return _fail(config)
    if "--query-compute-apps" in options:
        rows = (_select(config["apps"], options["--query-compute-apps"], nounits, config.get("app_fields"))
                if "apps" in config else [])
        print("\n".join(rows))
        return 0
    rows = _select(config["gpus"], options["--query-gpu"], nounits, config.get("gpu_fields"))
    if "-l" not in argv:
        print("\n".join(rows))
        return 0
    interval = float(argv[argv.index("-l") + 1])
    printed = 0
    while True:
        for row in rows:
            if printed == config.get("rows_then_fail"):
                return _fail(config)
            print(row, flush=True)
            printed += 1
        time.sleep(interval)


def main(tool: str, argv: list[str], config: dict) -> int:
    """Entry point of the installed script."""
    if tool == "nvidia-smi":
        return _nvidia_smi(argv, config)
    if "fail" in config:
        return _fail(config)
    key = " ".join(argv)
    replies = config["replies"]
    if key not in replies:
        print(f"{tool}: unknown arguments {key!r}", file=sys.stderr)
        return 2
    sys.stdout.write(Path(replies[key]).read_text())
    return 0


def path_with(bin_dir: Path) -> str:
    """PATH with ``bin_dir`` first and no real accelerator tool behind it."""
    return os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"])
