#include "base/npy.h"

#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string_view>

#include "base/check.h"
#include "base/file_io.h"

namespace tern::npy {

static_assert(std::endian::native == std::endian::little,
              ".npy data is read as little-endian: tern targets little-endian CPUs only");

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
// A header is a short dict; numpy itself refuses headers over 10000 bytes by default.
// The cap keeps a hostile header length from causing a large allocation.
constexpr uint64_t kMaxHeaderLen = uint64_t{1} << 20;
constexpr size_t kAlign = 64;  // numpy pads magic + length + header to a multiple of 64
// read() takes files up to 2 GiB (the size of one ONNX initializer by default). It holds
// the whole file while it copies the data into the tensor: twice the data at the peak.
constexpr int64_t kMaxFileBytes = int64_t{1} << 31;

struct Preamble {
  int major = 0;
  size_t prefix_len = 0;  // magic + version + header-length field
  uint64_t header_len = 0;
};

struct Header {
  DType dtype = DType::kFloat32;
  Shape shape;
  uint64_t data_bytes = 0;
};

// Checks magic and version; `p` holds the first `n` bytes of the file.
Preamble parse_preamble(const uint8_t* p, size_t n, const std::string& name) {
  TERN_CHECK(n > 0, IOError, "'{}': not a .npy file: the file is empty", name);
  TERN_CHECK(n >= kMagicLen + 2, IOError,
             "'{}': not a .npy file: {} bytes is shorter than the 8-byte magic and version", name,
             n);
  TERN_CHECK(std::memcmp(p, kMagic, kMagicLen) == 0, IOError,
             "'{}': not a .npy file: bad magic (expected \\x93NUMPY)", name);
  Preamble pre;
  pre.major = p[6];
  const int minor = p[7];
  TERN_CHECK((pre.major == 1 || pre.major == 2 || pre.major == 3) && minor == 0, IOError,
             "'{}': unsupported .npy format version {}.{} (tern reads 1.0, 2.0 and 3.0)", name,
             pre.major, minor);
  pre.prefix_len = pre.major == 1 ? 10 : 12;
  TERN_CHECK(n >= pre.prefix_len, IOError,
             "'{}': truncated .npy file: {} bytes, the header length field ends at byte {}", name,
             n, pre.prefix_len);
  if (pre.major == 1) {
    pre.header_len = uint64_t{p[8]} | uint64_t{p[9]} << 8;
  } else {
    pre.header_len =
        uint64_t{p[8]} | uint64_t{p[9]} << 8 | uint64_t{p[10]} << 16 | uint64_t{p[11]} << 24;
  }
  TERN_CHECK(pre.header_len <= kMaxHeaderLen, IOError,
             "'{}': bad .npy header: declared header length {} exceeds the limit of {} bytes", name,
             pre.header_len, kMaxHeaderLen);
  return pre;
}

// A recursive-descent reader for the header dict, a small subset of Python literals:
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& name) : s_(text), name_(name) {}

  Header parse() {
    std::string descr;
    bool have_descr = false, have_order = false, have_shape = false;
    bool fortran = false;
    Shape shape;
    skip_ws();
    expect('{', "'{' at the start of the header dict");
    skip_ws();
    while (!eat('}')) {
      const std::string key = parse_string("a quoted key");
      skip_ws();
      expect(':', "':' after a key");
      skip_ws();
      if (key == "descr") {
        if (peek() == '[') fail("descr is a list: structured dtypes are not supported");
        descr = parse_string("a quoted string for 'descr'");
        have_descr = true;
      } else if (key == "fortran_order") {
        fortran = parse_bool();
        have_order = true;
      } else if (key == "shape") {
        shape = parse_shape();
        have_shape = true;
      } else {
        fail(fmt::format("unexpected key '{}'", key));
      }
      skip_ws();
      if (eat(',')) {
        skip_ws();
      } else if (peek() != '}') {
        fail("expected ',' or '}' after a value");
      }
    }
    skip_ws();
    if (pos_ != s_.size()) fail("unexpected text after the closing '}'");
    if (!have_descr || !have_order || !have_shape) {
      fail("the header dict must have the keys 'descr', 'fortran_order' and 'shape'");
    }
    TERN_CHECK(!fortran, IOError,
               "'{}': fortran_order True (column-major data) is not supported: save the array "
               "in C order (numpy.ascontiguousarray)",
               name_);
    Header h;
    h.dtype = parse_descr(descr);
    h.shape = std::move(shape);
    uint64_t numel = 1;
    for (int64_t d : h.shape) {
      if (d != 0 && numel > std::numeric_limits<uint64_t>::max() / static_cast<uint64_t>(d)) {
        fail(fmt::format("shape {} overflows", shape_str(h.shape)));
      }
      numel *= static_cast<uint64_t>(d);
    }
    const uint64_t esize = dtype_size(h.dtype);
    if (numel > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / esize) {
      fail(fmt::format("shape {} overflows", shape_str(h.shape)));
    }
    h.data_bytes = numel * esize;
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    TERN_THROW(IOError, "'{}': bad .npy header: {} (at offset {} of \"{}\")", name_, what, pos_,
               printable(s_));
  }

  static std::string printable(std::string_view s) {
    std::string out;
    for (char c : s.substr(0, 200)) {
      const auto u = static_cast<unsigned char>(c);
      out += (u >= 0x20 && u < 0x7f) ? c : '?';
    }
    if (s.size() > 200) out += "...";
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
  }

  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool eat(char c) {
    if (peek() != c || pos_ >= s_.size()) return false;
    ++pos_;
    return true;
  }
  void expect(char c, const char* what) {
    if (!eat(c)) fail(fmt::format("expected {}", what));
  }
  void skip_ws() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }

  std::string parse_string(const char* what) {
    const char q = peek();
    if (q != '\'' && q != '"') fail(fmt::format("expected {}", what));
    ++pos_;
    const size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != q) {
      if (s_[pos_] == '\\') fail("escape sequences are not supported in header strings");
      ++pos_;
    }
    if (pos_ >= s_.size()) fail("unterminated string");
    std::string out(s_.substr(start, pos_ - start));
    ++pos_;
    return out;
  }

  bool parse_bool() {
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("expected True or False for 'fortran_order'");
  }

  int64_t parse_int() {
    if (peek() < '0' || peek() > '9') fail("expected a non-negative integer dim in 'shape'");
    int64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      const int digit = peek() - '0';
      if (v > (std::numeric_limits<int64_t>::max() - digit) / 10) fail("a dim overflows int64");
      v = v * 10 + digit;
      ++pos_;
    }
    eat('L');  // Python 2 long literal, written by old numpy versions
    return v;
  }

  Shape parse_shape() {
    Shape shape;
    expect('(', "'(' to start the 'shape' tuple");
    skip_ws();
    while (!eat(')')) {
      shape.push_back(parse_int());
      skip_ws();
      if (eat(',')) {
        skip_ws();
      } else if (peek() != ')') {
        fail("expected ',' or ')' in the 'shape' tuple");
      }
    }
    return shape;
  }

  DType parse_descr(const std::string& d) const {
    if (d.size() == 3) {
      const char order = d[0];
      const std::string_view type = std::string_view(d).substr(1);
      // One-byte types have no byte order: numpy writes '|', accept any marker.
      if (order == '|' || order == '<' || order == '>' || order == '=') {
        if (type == "i1") return DType::kInt8;
        if (type == "u1") return DType::kUint8;
        if (type == "b1") return DType::kBool;
      }
      if (order == '<') {
        if (type == "f4") return DType::kFloat32;
        if (type == "f2") return DType::kFloat16;
        if (type == "i4") return DType::kInt32;
        if (type == "i8") return DType::kInt64;
        if (type == "f8") return DType::kFloat64;
        if (type == "i2") return DType::kInt16;
        if (type == "u2") return DType::kUint16;
        if (type == "u4") return DType::kUint32;
        if (type == "u8") return DType::kUint64;
      }
      if (order == '>') {
        TERN_THROW(IOError,
                   "'{}': unsupported .npy dtype '{}': big-endian data is not supported "
                   "(save it with a little-endian dtype such as '<{}')",
                   name_, d, type);
      }
    }
    TERN_THROW(IOError,
               "'{}': unsupported .npy dtype '{}' (tern reads <f4, <f8, <f2, |i1, <i2, <i4, "
               "<i8, |u1, <u2, <u4, <u8, |b1)",
               name_, d);
  }

  std::string_view s_;
  const std::string& name_;
  size_t pos_ = 0;
};

// Checks that `data_bytes` of data follow the header in a file of `total` bytes.
void check_data_size(const Header& h, uint64_t offset, uint64_t total, const std::string& name) {
  const uint64_t avail = total - offset;
  TERN_CHECK(avail >= h.data_bytes, IOError,
             "'{}': truncated .npy data: shape {} of {} needs {} bytes, but the file has {} "
             "after the header",
             name, shape_str(h.shape), dtype_name(h.dtype), h.data_bytes, avail);
  TERN_CHECK(avail == h.data_bytes, IOError,
             "'{}': {} unexpected bytes after the .npy data (shape {} of {} needs {} bytes)", name,
             avail - h.data_bytes, shape_str(h.shape), dtype_name(h.dtype), h.data_bytes);
}

// Bool bytes other than 0 and 1 are normalized, so tern's kernels may rely on 0/1.
void normalize_bools(Tensor& t) {
  if (t.dtype() != DType::kBool) return;
  auto* p = static_cast<uint8_t*>(t.raw_data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = p[i] != 0;
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

std::string header_text(const Tensor& t) {
  TERN_CHECK(descr(t.dtype()) != nullptr, InvalidArgument,
             "tern does not write {} tensors to .npy (bfloat16: cast to float32 first)",
             dtype_name(t.dtype()));
  std::string shape = "(";
  for (size_t i = 0; i < t.shape().size(); ++i) {
    shape += fmt::format("{}, ", t.shape()[i]);
  }
  if (t.shape().size() > 1) shape.resize(shape.size() - 2);  // (2, 3) but (5,)
  if (t.shape().size() == 1) shape.pop_back();
  shape += ")";
  return fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr(t.dtype()),
                     shape);
}

}  // namespace

const char* descr(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "<f4";
    case DType::kFloat16:
      return "<f2";
    case DType::kInt8:
      return "|i1";
    case DType::kUint8:
      return "|u1";
    case DType::kInt32:
      return "<i4";
    case DType::kInt64:
      return "<i8";
    case DType::kBool:
      return "|b1";
    case DType::kFloat64:
      return "<f8";
    case DType::kInt16:
      return "<i2";
    case DType::kUint16:
      return "<u2";
    case DType::kUint32:
      return "<u4";
    case DType::kUint64:
      return "<u8";
    case DType::kBFloat16:
      return nullptr;  // numpy has no bfloat16
    case DType::kString:
      return nullptr;  // numpy's strings are fixed-width unicode: not written by tern
  }
  return nullptr;
}

Tensor parse(const void* data, size_t size, const std::string& name) {
  const auto* p = static_cast<const uint8_t*>(data);
  const Preamble pre = parse_preamble(p, size, name);
  TERN_CHECK(size - pre.prefix_len >= pre.header_len, IOError,
             "'{}': truncated .npy header: {} bytes declared, {} present", name, pre.header_len,
             size - pre.prefix_len);
  const std::string_view text(reinterpret_cast<const char*>(p + pre.prefix_len),
                              static_cast<size_t>(pre.header_len));
  const Header h = HeaderParser(text, name).parse();
  const uint64_t offset = pre.prefix_len + pre.header_len;
  check_data_size(h, offset, size, name);
  Tensor t = Tensor::empty(h.dtype, h.shape);
  if (h.data_bytes) std::memcpy(t.raw_data(), p + offset, static_cast<size_t>(h.data_bytes));
  normalize_bools(t);
  return t;
}

Tensor read(const std::string& path) {
  const std::string bytes = read_file_bytes(path, ".npy", kMaxFileBytes);
  return parse(bytes.data(), bytes.size(), path);
}

std::string serialize(const Tensor& t) {
  TERN_CHECK(t.defined(), InvalidArgument, "npy::serialize: the tensor is undefined");
  std::string header = header_text(t);
  // Pad with spaces and end with '\n' so that data starts at a multiple of 64 bytes.
  int major = 1;
  size_t prefix_len = 10;
  size_t total = prefix_len + header.size() + 1;
  if ((total + kAlign - 1) / kAlign * kAlign - prefix_len > 0xFFFF) {
    major = 2;
    prefix_len = 12;
    total = prefix_len + header.size() + 1;
  }
  const size_t padded = (total + kAlign - 1) / kAlign * kAlign;
  header.append(padded - total, ' ');
  header.push_back('\n');
  const uint64_t hlen = header.size();

  const Tensor c = t.contiguous();
  std::string out;
  out.reserve(prefix_len + hlen + c.nbytes());
  out.append(kMagic, kMagicLen);
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  out.push_back(static_cast<char>(hlen & 0xFF));
  out.push_back(static_cast<char>((hlen >> 8) & 0xFF));
  if (major != 1) {
    out.push_back(static_cast<char>((hlen >> 16) & 0xFF));
    out.push_back(static_cast<char>((hlen >> 24) & 0xFF));
  }
  out += header;
  out.append(static_cast<const char*>(c.raw_data()), c.nbytes());
  return out;
}

void write(const std::string& path, const Tensor& t) {
  const std::string bytes = serialize(t);
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "wb"));
  TERN_CHECK(f != nullptr, IOError, "'{}': cannot create .npy file: {}", path,
             std::strerror(errno));
  const size_t put = std::fwrite(bytes.data(), 1, bytes.size(), f.get());
  TERN_CHECK(put == bytes.size(), IOError, "'{}': write error after {} of {} bytes: {}", path, put,
             bytes.size(), std::strerror(errno));
  TERN_CHECK(std::fclose(f.release()) == 0, IOError, "'{}': cannot close the .npy file: {}", path,
             std::strerror(errno));
}

}  // namespace tern::npy
