"""Autograd: grad-mode state, the graph's nodes, and the engine (csrc/autograd in upstream)."""
