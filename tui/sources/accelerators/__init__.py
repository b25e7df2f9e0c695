"""Reading accelerators on a host: NVML (local), nvidia-smi, npu-smi, rocm-smi.

Every tool is run through a ``CommandRunner`` (``runner.py``), so the same
pollers read the local box (``LocalRunner``) or a remote one over SSH (a runner
that sends the argv through the connection). ``watch.py`` picks the tool a
host has and keeps reading; ``snapshot.py`` takes one reading for ``check``.
"""
