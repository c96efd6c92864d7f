"""Batch rules for matmul-family and convolution."""
