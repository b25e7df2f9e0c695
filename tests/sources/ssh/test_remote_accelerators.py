"""Accelerators over SSH: a box whose PATH holds a recorded nvidia-smi fills check's list."""

from __future__ import annotations

import json

from tests.corpus import verl_log
from tests.sources.accelerators.conftest import H100_REAL
from tests.sources.accelerators.replay import install
from tests.sources.ssh.test_remote_check import rlwatch
from tests.sshd import Sshd


def test_check_reads_the_boxs_gpus_over_the_runs_connection(ssh_world, tmp_path):
    home, _, _ = ssh_world
    bin_dir = tmp_path / "bin"
    install(bin_dir, "nvidia-smi", H100_REAL)  # replays what a real H100 printed
    box = Sshd(tmp_path / "box", [home.public_key])
    with open(box.config, "a") as config:
        config.write(f"SetEnv PATH={bin_dir}:/usr/bin:/bin\n")
    box.start()
    try:
        home.add_host("gpubox", box.port)
        home.trust(box.known_hosts_line())
        done = rlwatch(home, "check", f"gpubox:{verl_log('036')}", "--json")
        assert done.returncode == 2, done.stderr
        (gpu,) = json.loads(done.stdout)["accelerators"]
        assert gpu["host"] == "gpubox" and "H100" in gpu["name"]
        assert gpu["util_pct"] == 100 and gpu["mem_total_mib"] == 81559
        assert set(gpu) == {"host", "index", "uuid", "name", "util_pct", "mem_used_mib",
                            "mem_total_mib", "temp_c", "power_w"}
    finally:
        box.stop()
