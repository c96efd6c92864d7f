"""torchvision's operators (``torch.ops.torchvision.*``) in plain torch, registered through
``torch.library``: the schemas its compiled library defines and CPU kernels that follow its C++
CPU kernels step for step (same sampling points, same boundary rules, same dtype arithmetic).

Only the schemas and the CPU kernels come from here. torchvision's own Python registers the
autograd formulas (which call the ``_*_backward`` operators below) and the meta kernels once
``torchvision.extension._has_ops()`` is true. What is left (quantized and rotated-box operators)
is defined so that torchvision imports, and refuses by name when called.
"""

import torch

from torchnative.ecosystem.torchvision_ops import (deform_conv2d, nms, ps_roi_align, ps_roi_pool,
                                                   refused, roi_align, roi_pool)

NAMESPACE = "torchvision"

# operator -> (schema after the name, CPU kernel)
OPERATORS = {
    "nms": ("(Tensor dets, Tensor scores, float iou_threshold) -> Tensor", nms.nms),
    "roi_align": ("(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
                  "SymInt pooled_width, int sampling_ratio, bool aligned) -> Tensor",
                  roi_align.forward),
    "_roi_align_backward": ("(Tensor grad, Tensor rois, float spatial_scale, SymInt pooled_height, "
                            "SymInt pooled_width, SymInt batch_size, SymInt channels, "
                            "SymInt height, SymInt width, int sampling_ratio, bool aligned) -> Tensor",
                            roi_align.backward),
    "roi_pool": ("(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
                 "SymInt pooled_width) -> (Tensor, Tensor)", roi_pool.forward),
    "_roi_pool_backward": ("(Tensor grad, Tensor rois, Tensor argmax, float spatial_scale, "
                           "SymInt pooled_height, SymInt pooled_width, SymInt batch_size, "
                           "SymInt channels, SymInt height, SymInt width) -> Tensor",
                           roi_pool.backward),
    "ps_roi_align": ("(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
                     "SymInt pooled_width, int sampling_ratio) -> (Tensor, Tensor)",
                     ps_roi_align.forward),
    "_ps_roi_align_backward": ("(Tensor grad, Tensor rois, Tensor channel_mapping, "
                               "float spatial_scale, SymInt pooled_height, SymInt pooled_width, "
                               "int sampling_ratio, SymInt batch_size, SymInt channels, "
                               "SymInt height, SymInt width) -> Tensor", ps_roi_align.backward),
    "ps_roi_pool": ("(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
                    "SymInt pooled_width) -> (Tensor, Tensor)", ps_roi_pool.forward),
    "_ps_roi_pool_backward": ("(Tensor grad, Tensor rois, Tensor channel_mapping, "
                              "float spatial_scale, SymInt pooled_height, SymInt pooled_width, "
                              "SymInt batch_size, SymInt channels, SymInt height, SymInt width) "
                              "-> Tensor", ps_roi_pool.backward),
    "deform_conv2d": ("(Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias, "
                      "SymInt stride_h, SymInt stride_w, SymInt pad_h, SymInt pad_w, "
                      "SymInt dilation_h, SymInt dilation_w, SymInt groups, SymInt offset_groups, "
                      "bool use_mask) -> Tensor", deform_conv2d.forward),
    "_deform_conv2d_backward": ("(Tensor grad, Tensor input, Tensor weight, Tensor offset, "
                                "Tensor mask, Tensor bias, SymInt stride_h, SymInt stride_w, "
                                "SymInt pad_h, SymInt pad_w, SymInt dilation_h, SymInt dilation_w, "
                                "SymInt groups, SymInt offset_groups, bool use_mask) "
                                "-> (Tensor, Tensor, Tensor, Tensor, Tensor)",
                                deform_conv2d.backward),
    "_cuda_version": ("() -> int", lambda: -1),  # no CUDA build: torchvision's own answer then
    "qnms": ("(Tensor dets, Tensor scores, float iou_threshold) -> Tensor", refused.refuse("qnms")),
    "qroi_align": ("(Tensor input, Tensor rois, float input_scale, int input_zero_point, "
                   "float rois_scale, int rois_zero_point, float spatial_scale, "
                   "SymInt pooled_height, SymInt pooled_width, int sampling_ratio, bool aligned) "
                   "-> Tensor", refused.refuse("qroi_align")),
    "box_iou_rotated": ("(Tensor boxes1, Tensor boxes2) -> Tensor", refused.refuse("box_iou_rotated")),
}

_libraries = []  # torch.library.Library objects live as long as their registrations


def registered() -> bool:
    """Every operator above is defined in ``torch.ops.torchvision``."""
    return bool(_libraries) and all(hasattr(torch.ops.torchvision, name) for name in OPERATORS)


def register() -> None:
    """Define the operators and their CPU kernels (once per process)."""
    if _libraries:
        return
    lib = torch.library.Library(NAMESPACE, "DEF")
    for name, (schema, kernel) in OPERATORS.items():
        lib.define(name + schema)
        # CompositeExplicitAutograd for the schema-less-tensor op (no tensor to dispatch on)
        lib.impl(name, kernel, "CPU" if "Tensor" in schema.split("->")[0] else
                 "CompositeExplicitAutograd")
    _libraries.append(lib)
