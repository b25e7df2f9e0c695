"""Ray's authentication token, found where Ray's own CLI finds it.

A cluster started with token authentication (``RAY_AUTH_MODE=token``, the default
of recent local clusters) answers 401 without ``Authorization: Bearer TOKEN``. The
token is ``RAY_AUTH_TOKEN``, else the file ``RAY_AUTH_TOKEN_PATH`` names, else
``~/.ray/auth_token`` (what ``ray get-auth-token --generate`` writes). rlwatch sends
it only when ``RAY_AUTH_MODE=token`` says to or the dashboard asked for one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

HELP = ("set RAY_AUTH_TOKEN (or RAY_AUTH_TOKEN_PATH) to the cluster's token, or put it in "
        "~/.ray/auth_token, as for Ray's own CLI")


def auth_token(environ: Mapping[str, str] | None = None) -> str | None:
    """The token Ray's CLI would send, or None where there is none."""
    environ = os.environ if environ is None else environ
    if token := environ.get("RAY_AUTH_TOKEN", "").strip():
        return token
    path = environ.get("RAY_AUTH_TOKEN_PATH") or str(Path(os.path.expanduser("~")) / ".ray" / "auth_token")
    try:
        return Path(path).read_text().strip() or None
    except OSError:
        return None


def token_wanted(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the user said the cluster uses tokens (then it is sent from the first request)."""
    environ = os.environ if environ is None else environ
    return environ.get("RAY_AUTH_MODE", "").lower() == "token"
