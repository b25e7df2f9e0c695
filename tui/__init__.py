"""rlwatch: watch a verl RL fine-tuning run from the terminal.

The import package is ``tui``; its layers follow the one-way flow
sources → parsers → model → rules → ui, and only ``tui.ui`` imports Textual.
"""

__version__ = "0.1.0"
