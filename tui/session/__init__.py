"""One watched run: its source, the feeds into its model, its rules, alerts and accelerators.

The layer between the sources and parsers below and the commands and
screens above (``RunSession``): ``check``, ``report``, ``export`` and
``status`` load a session once; the dashboard follows one. It never imports
Textual: it tells whoever listens that the run changed, and the UI decides
when to draw.
"""
