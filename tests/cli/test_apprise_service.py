"""Apprise's services made with their own plugin loaded alone, checked against Apprise's own
loading of all of them (so a change in how Apprise declares or finds its plugins fails here)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.corpus import REPO
from tui.cli.apprise_service import UnusableUrl, service


def _fresh(code: str) -> dict:
    """What ``code`` prints (JSON), run in an interpreter that has loaded nothing yet."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_every_schema_apprise_knows_finds_the_plugin_apprise_would_use():
    # Some schemas placed first, in a fresh interpreter (Apprise's loading of all not done yet),
    # then every schema Apprise's own loading of all of them knows, compared class by class.
    found = _fresh("""
import json
from apprise.plugins import N_MGR
from tui.cli.apprise_service import plugin_of

first = ["json", "jsons", "mailto", "mailtos", "ntfy", "slack", "lark", "dingtalk", "wecombot", "tgram",
         "discord", "form", "xml", "apprise", "matrix", "fcm", "mqtt"]
mine = {schema: plugin_of(schema) for schema in first}
loaded_before_all = bool(N_MGR)
every = N_MGR.schemas()
mine.update({schema: plugin_of(schema) for schema in every if schema not in mine})
print(json.dumps({"loaded_before_all": loaded_before_all, "schemas": len(every),
                  "wrong": sorted(s for s in every if mine[s] is not N_MGR[s])}))
""")
    assert found["schemas"] > 200  # Apprise 2.3 has 262
    assert found["wrong"] == []
    assert found["loaded_before_all"] is False


def test_a_url_loads_its_own_plugin_and_not_apprises_hundred_others():
    loaded = _fresh("""
import json, sys
from tui.cli.notify import channels
before = "apprise" in sys.modules
made = channels([])
after_none = "apprise" in sys.modules
channels(["json://127.0.0.1:9/hook", "mailto://127.0.0.1:25?from=a@example.org&to=b@example.org&mode=insecure"])
from apprise.plugins import N_MGR
plugins = sorted({m.split(".")[2] for m in sys.modules if m.startswith("apprise.plugins.") and m != "apprise.plugins.base"})
print(json.dumps({"before": before, "after_none": after_none, "made": len(made), "all": bool(N_MGR),
                  "plugins": plugins}))
""")
    assert loaded["before"] is False and loaded["after_none"] is False and loaded["made"] == 0
    assert loaded["all"] is False
    assert {"custom_json", "email"} <= set(loaded["plugins"]) and len(loaded["plugins"]) <= 4


def test_a_services_own_https_address_is_placed_by_apprise_itself():
    made = service("https://discord.com/api/webhooks/4174216298/JHMHI8qBe7bk2ZwO5U711o3dV_js")
    assert made.url(privacy=True).startswith("discord://")


@pytest.mark.parametrize(("url", "said"), [
    ("nosuchservice://x", "not an Apprise URL rlwatch can send to"),
    ("not a url", "not an Apprise URL rlwatch can send to"),
    ("slack://bad", "not a URL Apprise's Slack plugin can use"),
])
def test_a_url_no_service_can_be_made_of_says_why(url, said):
    with pytest.raises(UnusableUrl, match=f"^{said}$"):
        service(url)
