"""A Ray job as a run, read through Ray's own Jobs API (no SSH command on the head).

``address`` parses the target forms (``ray+http://``, ``ray://``, ``ray:`` with
``RAY_ADDRESS``), ``auth`` finds Ray's token the way Ray's CLI does, ``jobs_api``
is the HTTP client (aiohttp, the only module that imports it), ``spool`` keeps the
driver log as it arrives in a local file for range reads, and ``ray_job`` is the
``JobSource`` built on them.
"""
