// Reading whole input files (models, tensors, images) with the checks untrusted paths need:
// the one place where tern opens a file to read it.
#pragma once

#include <cstdint>
#include <string>

namespace tern {

/// Reads the whole regular file at `path` and returns its bytes. `what` names the kind of
/// file in messages ("ONNX model", ".npy", "image"); `max_bytes` is the largest size
/// accepted.
///
/// The file is opened without blocking (O_NONBLOCK, so a FIFO cannot hang the caller) and
/// checked through the open descriptor (fstat), so the checks apply to what is read. Every
/// failure is an IOError naming the file and the problem:
///   - "'m.onnx': no such ONNX model file" (missing, or a missing folder on the way);
///   - "'m.onnx': cannot open ONNX model file: Permission denied" (other open errors);
///   - "'/dev/zero': cannot read image file: not a regular file (a character device)"
///     (also a directory, a FIFO, a block device or a socket: never read, so never a hang
///     or an endless read);
///   - "'x.npy': the .npy file is empty (0 bytes)";
///   - "'big.onnx': the ONNX model file is 3.2 GiB (3435973836 bytes), over the 2 GiB
///     limit (2147483647 bytes)" (checked before anything is allocated);
///   - a read error, or fewer bytes than the size reported (the file shrank meanwhile).
/// Exactly the size reported when the file was opened is read (bytes appended meanwhile
/// are ignored). POSIX only (open/fstat/read).
std::string read_file_bytes(const std::string& path, const char* what, int64_t max_bytes);

/// A byte count for messages: "1 byte", "512 bytes", "1.5 KiB", "3.2 GiB" (one decimal,
/// dropped when it is 0: "2 GiB").
std::string format_bytes(int64_t bytes);

/// The extension of `path`'s file name in lower case, with its dot: ".jpg" for "a/b.JPG",
/// ".npy" for "x.tar.NPY", "" for "a/b" or "a.d/b".
std::string lower_extension(const std::string& path);

}  // namespace tern
