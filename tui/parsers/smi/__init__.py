"""Grammars for accelerator status tools: one module per tool and output format.

Pure functions from text to typed records (``records.py``); no I/O. They share
one way of reading a value (``common.py``), so ``[N/A]``, ``[Not Supported]``,
``N/A``, ``NA`` and ``-`` mean "unknown" (None) everywhere and never zero.
"""
