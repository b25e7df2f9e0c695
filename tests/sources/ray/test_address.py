"""The Ray target forms: which dashboard (directly, or on the head through SSH) and which job,
and RAY_API_SERVER_ADDRESS / RAY_ADDRESS read as Ray's own CLI reads them."""

from __future__ import annotations

import pytest

from tui.sources.base import SourceError
from tui.sources.ray.address import is_ray_target, parse_ray_target
from tui.sources.ssh.target import RemoteTarget


@pytest.mark.parametrize(("text", "url", "job"), [
    ("ray+http://head:8266/raysubmit_abc", "http://head:8266", "raysubmit_abc"),
    ("ray+http://10.0.0.1", "http://10.0.0.1:8265", None),
    ("ray+http://10.0.0.1/", "http://10.0.0.1:8265", None),
    ("ray+https://ray.example.org:443/job-1", "https://ray.example.org:443", "job-1"),
    ("ray+http://[::1]:8265/02000000", "http://[::1]:8265", "02000000"),
])
def test_ray_http_names_the_dashboard_and_the_job(text, url, job):
    address = parse_ray_target(text, {})
    assert (address.url, address.head, address.job) == (url, None, job)


def test_ray_ssh_names_the_head_and_the_dashboards_port_there():
    address = parse_ray_target("ray://alice@gpu-head/raysubmit_x", {})
    assert address.head == RemoteTarget("gpu-head", ".", "alice")
    assert (address.url, address.port, address.job) == (None, 8265, "raysubmit_x")
    assert parse_ray_target("ray://gpu-head:8300", {}).port == 8300


@pytest.mark.parametrize(("environ", "url"), [
    ({}, "http://127.0.0.1:8265"),
    ({"RAY_ADDRESS": "http://head:8265"}, "http://head:8265"),
    ({"RAY_ADDRESS": "https://head"}, "https://head:8265"),
    # Ray's CLI lets the API server's own variable win over RAY_ADDRESS.
    ({"RAY_ADDRESS": "http://a:8265", "RAY_API_SERVER_ADDRESS": "http://b:9000"}, "http://b:9000"),
])
def test_ray_colon_takes_the_dashboard_from_the_environment(environ, url):
    address = parse_ray_target("ray:raysubmit_1", environ)
    assert (address.url, address.job) == (url, "raysubmit_1")
    assert parse_ray_target("ray:", environ).job is None


@pytest.mark.parametrize("value", ["ray://head:10001", "10.0.0.1:6379", "auto"])
def test_a_ray_address_that_only_ray_itself_resolves_is_one_line_saying_what_to_set(value):
    with pytest.raises(SourceError, match="http://HEAD:8265") as raised:
        parse_ray_target("ray:", {"RAY_ADDRESS": value})
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("text", ["ray+http://head:8265/a/b", "ray+http://", "ray://head/a b"])
def test_a_malformed_ray_target_is_refused(text):
    assert is_ray_target(text)
    with pytest.raises(SourceError, match="not a Ray job target"):
        parse_ray_target(text, {})


@pytest.mark.parametrize("text", ["ray:/runs/x", "ray:runs/x", "rayhost:/runs", "/runs/ray:x", "runs"])
def test_paths_and_hosts_that_only_look_like_ray_stay_what_they_were(text):
    assert not is_ray_target(text)
