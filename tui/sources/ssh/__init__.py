"""Runs on another machine, read over SSH with the user's own OpenSSH setup.

``target`` parses what the user typed, ``connection`` holds one asyncssh
connection per host (config, agent, keys, known_hosts, jump hosts),
``host_keys`` decides about keys that known_hosts does not vouch for,
``remote_commands`` writes every shell script the box runs (all of them only
read), ``remote_discovery`` finds the run's log on the box in one round trip,
and ``remote_log`` is the LogSource built on them.
"""
