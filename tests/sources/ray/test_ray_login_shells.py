"""``ray://`` through heads whose users' login shells are bash, dash, zsh, fish, tcsh or
BusyBox sh and whose start-up files print (``tests.login_shells``): the job through the
forwarded dashboard port, and the head's GPUs (a recorded H100's nvidia-smi on the
account's PATH) through commands that read past every greeting."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.login_shells import SHELLS, can_have_accounts, chatty_box
from tests.sources.accelerators.conftest import H100_REAL
from tests.sources.accelerators.replay import install
from tests.sources.ray.test_ray_ssh import user_env
from tests.sshd import ClientHome, find_sshd
from tests.support import rlwatch

pytestmark = pytest.mark.skipif(find_sshd() is None or not can_have_accounts(),
                                reason="needs sshd, root and unshare for accounts of their own")


@pytest.fixture(scope="module")
def chatty_head(tmp_path_factory) -> Iterator[ClientHome]:
    root = tmp_path_factory.mktemp("ray-shells")
    home = ClientHome(root / "home")
    install(root / "bin", "nvidia-smi", H100_REAL)
    box = chatty_box(root / "head", home.public_key, path=f"{root / 'bin'}:/usr/bin:/bin").start()
    for shell in SHELLS:
        home.add_host(f"head-{shell}", box.port, user=f"rlw-{shell}")
    home.trust(box.known_hosts_line())
    yield home
    box.stop()


@pytest.mark.parametrize("shell", SHELLS)
def test_a_ray_job_and_its_heads_gpus_through_every_login_shell(chatty_head, ray_head, ray_jobs, shell):
    done = rlwatch("check", f"ray://head-{shell}:{ray_head.port}/{ray_jobs['crashed']}", "--json",
                   env=user_env(chatty_head, ray_head))
    assert done.returncode == 2, done.stderr
    result = json.loads(done.stdout)
    assert (result["run"]["state"], result["run"]["last_step"]) == ("crashed", 3)
    (gpu,) = result["accelerators"]
    assert gpu["host"] == f"head-{shell}" and "H100" in gpu["name"]
