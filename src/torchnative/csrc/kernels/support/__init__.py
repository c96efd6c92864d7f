"""What the kernels share: the C++ conventions upstream's kernels follow (numpy views, opmath,
TensorIterator output strides, Scalar conversion, dtype names in messages) and BLAS threading."""
