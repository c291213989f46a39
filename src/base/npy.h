// .npy files (NumPy's array format): read versions 1.0, 2.0 and 3.0, write version 1.0.
//
// Layout of a file: the magic "\x93NUMPY", a major and a minor version byte, the header
// length (uint16 little-endian in 1.0, uint32 in 2.0 and 3.0), then the header: a Python
// dict literal such as {'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 4), }
// padded with spaces to a multiple of 64 bytes and ended by '\n', then the raw elements.
// Source: numpy/lib/format.py and NEP 1 ("A simple file format for NumPy arrays").
//
// Supported element types (descr): '<f4' float32, '<f2' float16, '|i1' int8, '|u1'
// uint8, '<i4' int32, '<i8' int64, '|b1' bool; one-byte types also accept '<' or '='
// as byte order. Data must be in C order (fortran_order False).
#pragma once

#include <cstddef>
#include <string>

#include "tern/tensor.h"

namespace tern::npy {

/// Reads the .npy file at `path` into a new contiguous tensor. Throws IOError naming the
/// file and the problem: missing or unreadable file, bad magic, unsupported version, bad
/// header, unsupported dtype (big-endian, float64, ...), fortran_order True ("not
/// supported"), truncated data or bytes after the data. The data size is checked
/// against the file size before anything is allocated.
Tensor read(const std::string& path);

/// Parses .npy bytes held in memory (same format and errors as read(); `name` stands for
/// the file in messages).
Tensor parse(const void* data, size_t size, const std::string& name = "<memory>");

/// The .npy bytes of `t` (format 1.0; 2.0 only if the header would not fit in 65535 bytes),
/// elements in C order whatever the tensor's strides.
std::string serialize(const Tensor& t);

/// Writes `t` to `path` as serialize() does. Throws IOError naming the path when the file
/// cannot be created or written, InvalidArgument for an undefined tensor.
void write(const std::string& path, const Tensor& t);

/// The descr string tern writes for `dtype` ("<f4", "|u1", ...); nullptr for bfloat16,
/// which numpy lacks, and string (serialize() throws InvalidArgument for both).
const char* descr(DType dtype);

}  // namespace tern::npy
