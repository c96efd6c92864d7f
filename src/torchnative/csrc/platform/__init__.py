"""The machine: which CPU capability (upstream's vectorized kernel build) the numerics follow. The
bottom layer: every other layer may read it, it imports none."""
