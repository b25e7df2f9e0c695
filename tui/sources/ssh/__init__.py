"""Runs on another machine, read over SSH with the user's own OpenSSH setup.

``target`` parses what the user typed, ``connection`` holds one asyncssh
connection per host (config, agent, keys, known_hosts, jump hosts), ``pool``
shares them between a fleet's runs, ``remote_commands`` writes every shell
script the box runs (all of them only read), and ``remote_log`` is the
LogSource built on them: one channel finds a run's log, backfills and follows
it, and answers beside it what the session asks next (``answers``).
"""
