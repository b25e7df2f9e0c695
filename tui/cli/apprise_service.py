"""An Apprise URL made into the service that sends to it, with that service's plugin loaded alone.

Apprise finds a URL's plugin by importing every one of its plugin modules (about
190) the first time it reads a URL: some 24 MB that a watcher left running for
days would hold for the one or two services it sends to. Apprise 2.x has no
setting that loads one plugin by its schema, so ``plugin_of`` finds the module
whose source declares the schema (``protocol = "json"``), imports that one
only, and keeps its plugin class only if the class itself says it takes the
schema (``schemas()``, as Apprise's own loader asks). ``service`` then makes the
service as ``Apprise.instantiate`` does. A URL placed no such way (a service's
own ``https://`` address, which Apprise recognises by asking every plugin) goes
through Apprise's own loading of all of them, so every URL Apprise takes works.
"""

from __future__ import annotations

import importlib
import os
import re
from pathlib import Path
from typing import Any

from apprise import Apprise, AppriseAsset
from apprise.manager_plugins import NotificationManager
from apprise.plugins import NotifyBase
from apprise.utils.parse import parse_urls

# A URL's schema, as Apprise reads it (``apprise.utils.parse.GET_SCHEMA_RE``).
_SCHEMA = re.compile(r"\s*(?P<schema>[a-z0-9]{1,32})://", re.IGNORECASE)
# The entries of Apprise's plugin folder that its loader imports (``PluginManager.load_modules``).
_PLUGIN_MODULE = re.compile(r"^(?P<name>(?!base|_)[a-z0-9_]+)(\.py)?$", re.IGNORECASE)


class UnusableUrl(ValueError):
    """A URL no Apprise service can be made of here; the message says why, in a few words."""


def urls(text: str) -> list[str]:
    """The URLs in one ``--notify`` value, split as ``Apprise.add`` splits them (commas, spaces)."""
    return list(parse_urls(text))


def service(url: str) -> NotifyBase:
    """The service that sends to ``url``; UnusableUrl if none can be made."""
    schema = _SCHEMA.match(url)
    plugin = plugin_of(schema.group("schema").lower()) if schema is not None else None
    if plugin is None:  # Apprise's own way, every plugin loaded
        made = Apprise.instantiate(url)
        if not isinstance(made, NotifyBase):
            raise UnusableUrl("not an Apprise URL rlwatch can send to")
        return made
    if not plugin.enabled:
        raise UnusableUrl("Apprise's plugin for it cannot run here (a library it needs is not installed)")
    # As Apprise.instantiate does: a ``#channel`` is part of the path, not a fragment.
    results = plugin.parse_url(url.replace("/#", "/%23"))
    if not results:
        raise UnusableUrl(f"not a URL Apprise's {plugin.service_name} plugin can read")
    results["tag"], results["asset"] = set(), AppriseAsset()
    try:
        made = plugin(**results)
    except Exception:  # noqa: BLE001 - a plugin refuses what it cannot use by raising anything
        raise UnusableUrl(f"not a URL Apprise's {plugin.service_name} plugin can use") from None
    if not made.enabled:
        raise UnusableUrl("Apprise's plugin for it cannot run here (a library it needs is not installed)")
    return made


def plugin_of(schema: str) -> Any:
    """The Apprise plugin class that takes URLs of ``schema`` (lower case), its module the only
    plugin module imported (and those whose source names the schema without taking it); None
    when no plugin module declares it."""
    folder = Path(NotificationManager.module_path)
    quoted = (f'"{schema}"', f"'{schema}'")
    for entry in sorted(os.listdir(folder)):
        name = _PLUGIN_MODULE.match(entry)
        if name is None:
            continue
        path = folder / entry
        sources = [path] if path.is_file() else sorted(path.glob("*.py"))
        if not any(_names(source, quoted) for source in sources):
            continue
        try:
            module = importlib.import_module(f"{NotificationManager.module_name_prefix}.{name.group('name')}")
        except Exception:  # noqa: BLE001 - a plugin that cannot load here: Apprise's own loading says
            continue
        for attribute in dir(module):
            plugin = getattr(module, attribute)
            if NotificationManager.module_filter_re.match(attribute) and hasattr(plugin, "app_id") \
                    and schema in plugin.schemas(plugin):
                return plugin
    return None


def _names(source: Path, quoted: tuple[str, ...]) -> bool:
    try:
        text = source.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(literal in text for literal in quoted)
