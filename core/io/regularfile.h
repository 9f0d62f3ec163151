#pragma once
// Reading a whole small file (a config.json, a tokenizer's vocabulary, a safetensors header)
// without ever blocking on what is not a regular file: a FIFO opened for reading waits for a
// writer, so the file is opened non-blocking and checked with fstat before a byte is read.

#include <cstdint>
#include <string>

namespace attn {

/// Reads the regular file at `path` into `text`, at most `limit` bytes. Returns "" on success,
/// otherwise what went wrong, for the caller's error: "cannot open (No such file or
/// directory)", "not a regular file (a FIFO)", "12345 bytes, more than the 1024 accepted",
/// "cannot read (…)" or "the file changed while reading". Never blocks on a FIFO or a device.
std::string readRegularFile(const std::string &path, std::uintmax_t limit, std::string &text);

/// What kind of non-regular file the mode `st_mode` describes: "a folder", "a FIFO", "a
/// socket", "a device" or "not a regular file".
std::string fileKindText(unsigned mode);

/// Opens `path` read-only (O_CLOEXEC) without blocking on a FIFO and checks that it is a regular
/// file. Returns the descriptor (blocking mode restored) and its size in `size`, or −1 with
/// `error` set as readRegularFile says.
int openRegularFile(const std::string &path, std::uintmax_t &size, std::string &error);

} // namespace attn
