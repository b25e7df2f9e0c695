"""``python -m tui`` runs the rlwatch command."""

import sys

from tui.cli.main import main

sys.exit(main())
