"""Placeholder until the Python Reducer lands."""
from ..core.refuse import refusing_class, refusing_function

M = "torch._C._distributed_c10d"
DDP_CLASSES = {n: refusing_class(f"{M}.{n}") for n in ("Reducer", "Logger", "GradBucket")}
DDP_CLASSES.update({n: refusing_function(f"{M}.{n}") for n in (
    "_compute_bucket_assignment_by_size", "_verify_params_across_processes", "_broadcast_coalesced",
    "_register_comm_hook", "_register_builtin_comm_hook")})
