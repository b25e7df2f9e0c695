"""Widgets, each with its own DEFAULT_CSS: the run header, the metric panels and their grid."""
