"""The host-list grammar read the way Slurm's own ``scontrol show hostnames`` reads it."""

from __future__ import annotations

import pytest

from tui.parsers.jobs.slurm import SlurmAnswerError, expand_hostlist

EXPRESSIONS = ["gpu[01-03,07]", "gpu[8-11]", "node[001-3]", "a[1-2]b[08-10]", "n1,n[3-4] x9",
               "c[1-2]-[3-4]", "localhost", "rack[1-2]-ib", "gpu[3-1]", "a[1,3]b"]


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_host_lists_expand_to_what_scontrol_says(slurm_world, expression):
    done = slurm_world.cluster.run("scontrol", "show", "hostnames", expression, check=False)
    if done.returncode != 0 or "Invalid hostlist" in done.stdout + done.stderr:
        with pytest.raises(SlurmAnswerError):
            expand_hostlist(expression)
    else:
        assert expand_hostlist(expression) == tuple(done.stdout.split())
