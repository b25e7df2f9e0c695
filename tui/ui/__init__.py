"""The Textual dashboard: the only layer that imports Textual (DESIGN.md's one-way flow).

``ESCDELAY``: a lone ESC byte cannot be told from the start of an escape
sequence (an arrow key) until nothing follows for this long, so every ``esc``
(back) waits it out before anything is drawn. Textual waits 100 ms; rlwatch
asks for 25 ms, as fast terminals and tmux with a short ``escape-time`` deliver
a sequence's bytes together, unless the user set ``ESCDELAY`` themselves. It
must be set before Textual is imported, hence here.
"""

import os

os.environ.setdefault("ESCDELAY", "25")
