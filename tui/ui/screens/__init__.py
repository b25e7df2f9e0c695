"""Screens, one per mode: the dashboard and its help."""
