"""Batch norm under vmap: running statistics updated in place must be batched wherever the input
is (upstream's error otherwise); then each element's statistics are its own (per element)."""

from __future__ import annotations

from .batching import rule, unwrap


@rule("native_batch_norm.default", "_native_batch_norm_legit.default",
      "_batch_norm_with_update.default", "batch_norm.default", "_batch_norm_impl_index.default")
def batch_norm(op, level, args, kwargs):
    names = [a.name for a in op.schema.arguments]

    def arg(name, default=None):
        i = names.index(name) if name in names else None
        if i is None:
            return default
        return args[i] if i < len(args) else kwargs.get(name, default)

    training = arg("training", True) if "training" in names else \
        arg("use_input_stats", True) if "use_input_stats" in names else True
    stats = [arg("running_mean"), arg("running_var")]
    if training and unwrap(args[0], level)[1] is not None and \
            any(s is not None and unwrap(s, level)[1] is None for s in stats):
        raise RuntimeError(
            "Batch norm got a batched tensor as input while the running_mean or running_var, "
            "which will be updated in place, were not batched.\nIf you are using a module and "
            "do not need eval mode, please set `track_running_stats` to be False.If you are "
            "using a prebuilt module and do not need eval mode, please see the functorch "
            "website for resources on how to patch your module to work with vmap")
    return NotImplemented
