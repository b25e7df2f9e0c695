"""The Textual dashboard: the only layer that imports Textual (DESIGN.md's one-way flow)."""
