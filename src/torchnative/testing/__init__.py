"""Testing support: running upstream torch beside ours, comparing results."""
