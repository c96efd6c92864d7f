"""``torch._C._set_throw_on_mutable_data_ptr`` / ``_set_warn_deprecated_on_mutable_data_ptr``.

FakeTensorMode marks each fake tensor's storage so a C++ kernel that tries to write through it
fails loudly (fake tensors have no memory). Here fake tensors sit on meta storage, which has no
buffer and which no kernel writes through, so the mark is recorded on the storage and there is
no write for it to stop.
"""

from __future__ import annotations


def set_throw_on_mutable_data_ptr(tensor) -> None:
    tensor.untyped_storage()._tn_throw_on_mutable_data_ptr = True


def set_warn_deprecated_on_mutable_data_ptr(tensor) -> None:
    tensor.untyped_storage()._tn_warn_deprecated_on_mutable_data_ptr = True


TORCH_C = {
    "torch._C._set_throw_on_mutable_data_ptr": set_throw_on_mutable_data_ptr,
    "torch._C._set_warn_deprecated_on_mutable_data_ptr": set_warn_deprecated_on_mutable_data_ptr,
}
