"""Batch rules for view and shape operators."""
