"""Command-line entry points: each command wires sources, parsers, model and UI."""
