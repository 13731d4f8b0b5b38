// Test-only GGUF image builder: a byte buffer with little-endian writers, and
// a small GGUF writer on top. Tensors are placed back to back (aligned) with
// no padding after the last one, so every proper prefix of an image is
// truncated in a way the reader must notice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "nextok/gguf.hpp"

namespace nextok::test {

class ByteBuf {
 public:
  template <class T>
  ByteBuf& put(T v) {
    const size_t at = bytes_.size();
    bytes_.resize(at + sizeof(T));
    std::memcpy(bytes_.data() + at, &v, sizeof(T));
    return *this;
  }
  ByteBuf& u8(uint8_t v) { return put(v); }
  ByteBuf& u32(uint32_t v) { return put(v); }
  ByteBuf& u64(uint64_t v) { return put(v); }
  ByteBuf& raw(std::string_view s) {
    for (const char c : s) bytes_.push_back(static_cast<std::byte>(c));
    return *this;
  }
  ByteBuf& str(std::string_view s) { return u64(s.size()).raw(s); }
  ByteBuf& type(GgufType t) { return u32(static_cast<uint32_t>(t)); }
  ByteBuf& pad_to(size_t alignment) {
    while (bytes_.size() % alignment != 0) bytes_.push_back(std::byte{0});
    return *this;
  }
  ByteBuf& append(const std::vector<std::byte>& b) {
    bytes_.insert(bytes_.end(), b.begin(), b.end());
    return *this;
  }
  size_t size() const { return bytes_.size(); }
  std::vector<std::byte>& bytes() { return bytes_; }
  const std::vector<std::byte>& bytes() const { return bytes_; }

 private:
  std::vector<std::byte> bytes_;
};

class GgufWriter {
 public:
  explicit GgufWriter(uint32_t version = 3) : version_(version) {}

  template <class T>
  GgufWriter& scalar(std::string_view key, GgufType t, T v) {
    kv_.str(key).type(t).put(v);
    ++n_kv_;
    return *this;
  }
  GgufWriter& string(std::string_view key, std::string_view v) {
    kv_.str(key).type(GgufType::kString).str(v);
    ++n_kv_;
    return *this;
  }
  GgufWriter& string_array(std::string_view key, const std::vector<std::string>& v) {
    kv_.str(key).type(GgufType::kArray).type(GgufType::kString).u64(v.size());
    for (const auto& s : v) kv_.str(s);
    ++n_kv_;
    return *this;
  }
  template <class T>
  GgufWriter& array(std::string_view key, GgufType et, const std::vector<T>& v) {
    kv_.str(key).type(GgufType::kArray).type(et).u64(v.size());
    for (const T& x : v) kv_.put(x);
    ++n_kv_;
    return *this;
  }
  // Raw key + type + payload, for values the typed helpers cannot express.
  ByteBuf& raw_kv() {
    ++n_kv_;
    return kv_;
  }
  GgufWriter& alignment(uint32_t a) {
    alignment_ = a;
    return scalar("general.alignment", GgufType::kU32, a);
  }
  GgufWriter& tensor(std::string_view name, uint32_t ggml_type, std::vector<uint64_t> dims,
                     std::vector<std::byte> data) {
    tensors_.push_back({std::string(name), ggml_type, std::move(dims), std::move(data)});
    return *this;
  }

  std::vector<std::byte> build() const {
    ByteBuf out;
    out.raw("GGUF").u32(version_).u64(tensors_.size()).u64(n_kv_);
    out.append(kv_.bytes());
    uint64_t offset = 0;
    std::vector<uint64_t> offsets;
    for (const auto& t : tensors_) {
      offsets.push_back(offset);
      out.str(t.name).u32(static_cast<uint32_t>(t.dims.size()));
      for (const uint64_t d : t.dims) out.u64(d);
      out.u32(t.type).u64(offset);
      offset += t.data.size();
      offset = (offset + alignment_ - 1) / alignment_ * alignment_;
    }
    if (!tensors_.empty()) out.pad_to(alignment_);
    const size_t data_start = out.size();
    for (size_t i = 0; i < tensors_.size(); ++i) {
      while (out.size() < data_start + offsets[i]) out.u8(0);
      out.append(tensors_[i].data);
    }
    return std::move(out.bytes());
  }

 private:
  struct Tensor {
    std::string name;
    uint32_t type;
    std::vector<uint64_t> dims;
    std::vector<std::byte> data;
  };
  uint32_t version_;
  uint32_t alignment_ = 32;
  uint64_t n_kv_ = 0;
  ByteBuf kv_;
  std::vector<Tensor> tensors_;
};

}  // namespace nextok::test
