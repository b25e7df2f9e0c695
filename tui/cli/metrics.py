"""The runs' verdicts for Prometheus: the watcher's ``--metrics-port`` and ``check --format openmetrics``.

Labs that run many jobs already have Prometheus and Alertmanager; rlwatch's
verdicts become one more thing they scrape and route. What is exposed is
``tui.session.run_metrics``'s; here it is only written out, with the
``prometheus_client`` library: served over HTTP by the headless watcher (a
snapshot taken at each judging round, so a scrape never reads a run while
the event loop changes it), or printed once by ``check`` for node_exporter's
textfile collector, from cron.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterable, Iterator
from threading import Thread
from wsgiref.simple_server import WSGIServer

from prometheus_client import start_http_server
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.openmetrics.exposition import generate_latest
from prometheus_client.registry import Collector, CollectorRegistry

from tui.cli import exit_codes
from tui.cli.fleet import Found, checked_rules, runs_of
from tui.rules.findings import worst_severity
from tui.rules.rule_file import RuleSpec
from tui.session.run_metrics import METRICS, Sample, run_samples
from tui.sources.base import SourceError


def families(samples: Iterable[Sample]) -> list[Metric]:
    """The samples as Prometheus gauge families, one per metric name that has a sample."""
    made: dict[str, GaugeMetricFamily] = {}
    for sample in samples:
        family = made.get(sample.name)
        if family is None:
            help_text, _ = METRICS[sample.name]
            family = made[sample.name] = GaugeMetricFamily(
                sample.name, help_text, labels=[name for name, _ in sample.labels])
        family.add_metric([value for _, value in sample.labels], sample.value)
    return list(made.values())


class Snapshot(Collector):
    """The samples of the last judging round; what a scrape is answered with."""

    def __init__(self) -> None:
        self._samples: list[Sample] = []

    def update(self, samples: list[Sample]) -> None:
        self._samples = samples  # replaced whole: a scrape in its thread reads one round or the other

    def collect(self) -> Iterator[Metric]:
        yield from families(self._samples)


def serve(snapshot: Snapshot, where: str) -> tuple[WSGIServer, Thread]:
    """Serve ``snapshot`` on ``where`` (``PORT`` on 127.0.0.1, or ``ADDRESS:PORT``); ValueError
    for a bad ``where``, OSError when the port cannot be had."""
    address, _, port = where.rpartition(":")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError("not a port or ADDRESS:PORT")
    registry = CollectorRegistry(auto_describe=False)
    registry.register(snapshot)
    return start_http_server(int(port), addr=address.strip("[]") or "127.0.0.1", registry=registry)


def openmetrics(samples: Iterable[Sample]) -> str:
    """The samples in the OpenMetrics text format (what node_exporter's textfile collector reads)."""
    snapshot = Snapshot()
    snapshot.update(list(samples))
    registry = CollectorRegistry(auto_describe=False)
    registry.register(snapshot)
    return generate_latest(registry).decode()


# check --format openmetrics


def run_check_openmetrics(words: list[str], log: str | None, rules_file: str | None,
                          accept_new_host_key: bool, mute: str | None = None) -> int:
    """``check --format openmetrics``: every run's samples on stdout; the worst run's status
    (``mute``: --mute's rule ids)."""
    rules = checked_rules(words, rules_file, mute)
    if rules is None:
        return exit_codes.UNREADABLE
    samples, status = asyncio.run(_judge_all(words, log, rules, accept_new_host_key))
    sys.stdout.write(openmetrics(samples))
    return status


async def _judge_all(words: list[str], log: str | None, rules: list[RuleSpec],
                     accept_new_host_key: bool) -> tuple[list[Sample], int]:
    from tui.cli.check import judged
    from tui.sources.ssh.pool import ConnectionPool

    pool = ConnectionPool(accept_new_host_key)

    async def one(run: Found) -> tuple[list[Sample], int]:
        try:
            run.check()
            session = await judged(run.wanted.target, log, accept_new_host_key, rules, pool)
        except SourceError as error:
            print(f"rlwatch: {run.wanted.target}: {error}", file=sys.stderr)
            return run_samples(run.name, run.host, None, [], False, time.time()), exit_codes.UNREADABLE
        samples = run_samples(run.name, run.host, session.model, session.findings, True, time.time())
        return samples, exit_codes.for_worst(worst_severity(session.findings))

    try:
        done = await asyncio.gather(*(one(run) for run in await runs_of(words, pool)))
    finally:
        await pool.close()
    return [sample for samples, _ in done for sample in samples], max((status for _, status in done), default=exit_codes.UNREADABLE)
