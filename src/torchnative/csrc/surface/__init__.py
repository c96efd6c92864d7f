"""torch._C as upstream Python reads it: the exported names, the refusals for the rest of the
import surface, the init calls, build flags and the subsystems we only answer about."""
