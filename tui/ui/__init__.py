"""The Textual dashboard: the only layer that imports Textual (DESIGN.md's one-way flow).

``ESCDELAY``: a lone ESC byte cannot be told from the start of an escape
sequence (an arrow key) until nothing follows for this long, so every ``esc``
(back) waits it out before anything is drawn. Textual waits 100 ms; rlwatch
asks for 25 ms, as fast terminals and tmux with a short ``escape-time`` deliver
a sequence's bytes together, unless the user set ``ESCDELAY`` themselves. It
must be set before Textual is imported, hence here.

``TEXTUAL_ANIMATIONS``: Textual slides a tab's underline for 300 ms after
each tab key (and animates scrolls), so a tab switch kept writing frames for
a third of a second and every animated frame crossed an SSH link. rlwatch
draws the end state at once unless the user asked for animations.
"""

import os

os.environ.setdefault("ESCDELAY", "25")
os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
