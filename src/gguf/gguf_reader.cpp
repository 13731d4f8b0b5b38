// GGUF parsing and validation: one forward pass over the header, the
// metadata and the tensor infos. Every length is checked against the bytes
// that remain before it is used, so nothing is allocated from a hostile
// count and nothing is read out of bounds. See include/nextok/gguf.hpp.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <string>

#include "gguf/gguf_internal.hpp"
#include "nextok/error.hpp"
#include "nextok/gguf.hpp"
#include "util/mapped_file.hpp"

namespace nextok {

struct GgufFile::Mapping {
  std::shared_ptr<const util::MappedFile> file;
};

namespace {

constexpr uint64_t kInt64Max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
// Smallest encodings, used to reject counts that cannot fit before looping.
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;              // key length, type, 1-byte value
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;  // name length, n_dims, type, offset
constexpr uint64_t kMinArrayBytes = 4 + 8;               // element type, count

bool valid_type(uint32_t t) {
  return t <= static_cast<uint32_t>(GgufType::kF64);
}

}  // namespace

// Befriended by GgufFile; fills it in place.
class GgufParser {
 public:
  explicit GgufParser(GgufFile& f) : f_(f), p_(f.bytes_.data()), size_(f.bytes_.size()) {}

  void parse() {
    parse_header();
    parse_metadata();
    index_metadata();
    read_alignment();
    parse_tensor_infos();
    index_tensors();
    place_tensors();
  }

 private:
  enum class Ctx { kHeader, kKey, kTensor };

  GgufFile& f_;
  const std::byte* p_;
  uint64_t size_;
  uint64_t pos_ = 0;
  Ctx ctx_ = Ctx::kHeader;
  uint64_t ctx_index_ = 0;
  std::string_view ctx_name_;
  bool ctx_named_ = false;
  uint64_t n_tensors_ = 0;
  uint64_t n_kv_ = 0;
  std::vector<uint64_t> tensor_name_pos_;    // offset of each tensor info
  std::vector<uint64_t> tensor_offset_pos_;  // offset of each tensor's data-offset field

  std::string context() const {
    switch (ctx_) {
      case Ctx::kHeader:
        return "header";
      case Ctx::kKey:
        return ctx_named_ ? "metadata key '" + gguf_detail::printable(ctx_name_) + "'"
                          : "metadata key #" + std::to_string(ctx_index_);
      case Ctx::kTensor:
        return ctx_named_ ? "tensor '" + gguf_detail::printable(ctx_name_) + "'"
                          : "tensor info #" + std::to_string(ctx_index_);
    }
    return {};
  }

  [[noreturn]] void fail(uint64_t offset, const std::string& what) const {
    throw Error(ErrorCode::kMalformedFile, ctx_named_ ? std::string(ctx_name_) : std::string(),
                f_.name_ + ": " + what + " at offset " + std::to_string(offset) + " (file size " +
                    std::to_string(size_) + ")");
  }
  [[noreturn]] void fail_ctx(uint64_t offset, const std::string& what) const {
    fail(offset, context() + ": " + what);
  }

  uint64_t remaining() const { return size_ - pos_; }

  void need(uint64_t n, const char* what) const {
    if (n > remaining())
      fail_ctx(pos_, std::string(what) + " needs " + std::to_string(n) +
                         " bytes but the file ends (" + std::to_string(remaining()) +
                         " bytes remain)");
  }
  uint32_t u32(const char* what) {
    need(4, what);
    const uint32_t v = gguf_detail::load<uint32_t>(p_ + pos_);
    pos_ += 4;
    return v;
  }
  uint64_t u64(const char* what) {
    need(8, what);
    const uint64_t v = gguf_detail::load<uint64_t>(p_ + pos_);
    pos_ += 8;
    return v;
  }
  std::string_view str(const char* what, uint64_t max_len) {
    const uint64_t len_pos = pos_;
    const uint64_t len = u64(what);
    if (len > remaining())
      fail_ctx(len_pos, std::string(what) + " length " + std::to_string(len) +
                            " runs past the end of the file (" + std::to_string(remaining()) +
                            " bytes remain)");
    if (len > max_len)
      fail_ctx(len_pos, std::string(what) + " length " + std::to_string(len) +
                            " exceeds the limit of " + std::to_string(max_len) + " bytes");
    const std::string_view s(reinterpret_cast<const char*>(p_ + pos_), len);
    pos_ += len;
    return s;
  }

  void parse_header() {
    ctx_ = Ctx::kHeader;
    if (size_ < 4)
      fail(0,
           "not a GGUF file: " + std::to_string(size_) + " bytes, too short for the 'GGUF' magic");
    if (std::memcmp(p_, "GGUF", 4) != 0) {
      std::string m;
      for (int i = 0; i < 4; ++i) m += gguf_detail::printable_char(static_cast<char>(p_[i]));
      fail(0, "not a GGUF file: the magic is '" + m + "', expected 'GGUF'");
    }
    pos_ = 4;
    const uint64_t version_pos = pos_;
    const uint32_t version = u32("version");
    if (version == 1)
      fail(version_pos, "GGUF version 1 is not supported (only versions 2 and 3 are)");
    if (version != 2 && version != 3) {
      if ((version & 0xFFFFu) == 0 && version != 0)
        fail(version_pos, "big-endian GGUF (version field " + std::to_string(version) +
                              ", byte-swapped " + std::to_string(__builtin_bswap32(version)) +
                              ") is not supported");
      fail(version_pos, "unsupported GGUF version " + std::to_string(version) +
                            " (only versions 2 and 3 are supported)");
    }
    f_.version_ = version;
    const uint64_t nt_pos = pos_;
    n_tensors_ = u64("tensor count");
    const uint64_t nkv_pos = pos_;
    n_kv_ = u64("metadata key count");
    if (n_kv_ > kGgufMaxMetadataKeys)
      fail(nkv_pos, "metadata key count " + std::to_string(n_kv_) + " exceeds the limit of " +
                        std::to_string(kGgufMaxMetadataKeys));
    if (n_tensors_ > kGgufMaxTensors)
      fail(nt_pos, "tensor count " + std::to_string(n_tensors_) + " exceeds the limit of " +
                       std::to_string(kGgufMaxTensors));
    if (n_kv_ * kMinKvBytes > remaining())
      fail(nkv_pos, "metadata key count " + std::to_string(n_kv_) + " cannot fit in the " +
                        std::to_string(remaining()) + " bytes that remain");
    if (n_tensors_ * kMinTensorInfoBytes > remaining())
      fail(nt_pos, "tensor count " + std::to_string(n_tensors_) + " cannot fit in the " +
                       std::to_string(remaining()) + " bytes that remain");
  }

  GgufType value_type(const char* what) {
    const uint64_t at = pos_;
    const uint32_t t = u32(what);
    if (!valid_type(t)) fail_ctx(at, std::string("unknown ") + what + " " + std::to_string(t));
    return static_cast<GgufType>(t);
  }

  // Skips `count` encoded elements of type `elem`, validating each.
  void skip_array(GgufType elem, uint64_t count, uint64_t count_pos, uint32_t depth) {
    const std::string tn = gguf_type_name(elem);
    // The smallest encoding of one element: fixed size, or a length / type
    // header. Checked by division so a hostile count cannot overflow.
    const uint64_t sz = gguf_detail::scalar_size(elem);
    const uint64_t min_elem =
        sz != 0 ? sz : (elem == GgufType::kString ? uint64_t{8} : kMinArrayBytes);
    if (count > remaining() / min_elem) {
      std::string bytes;
      if (sz != 0 && count <= std::numeric_limits<uint64_t>::max() / sz)
        bytes = " (" + std::to_string(count * sz) + " bytes)";
      fail_ctx(count_pos, tn + " array length " + std::to_string(count) + bytes +
                              " runs past the end of the file (" + std::to_string(remaining()) +
                              " bytes remain)");
    }
    if (count > kGgufMaxArrayElements)
      fail_ctx(count_pos, tn + " array length " + std::to_string(count) + " exceeds the limit of " +
                              std::to_string(kGgufMaxArrayElements) + " elements");
    if (sz != 0) {
      pos_ += count * sz;
      return;
    }
    if (elem == GgufType::kString) {
      for (uint64_t i = 0; i < count; ++i) {
        const uint64_t len_pos = pos_;
        if (8 > remaining())
          fail_ctx(pos_, "string array element " + std::to_string(i) + " of " +
                             std::to_string(count) +
                             ": the length field runs past the end of the file");
        const uint64_t len = gguf_detail::load<uint64_t>(p_ + pos_);
        pos_ += 8;
        if (len > remaining())
          fail_ctx(len_pos, "string array element " + std::to_string(i) + " of " +
                                std::to_string(count) + ": length " + std::to_string(len) +
                                " runs past the end of the file (" + std::to_string(remaining()) +
                                " bytes remain)");
        pos_ += len;
      }
      return;
    }
    // Arrays of arrays.
    if (depth >= kGgufMaxArrayDepth)
      fail_ctx(count_pos, "arrays nested deeper than " + std::to_string(kGgufMaxArrayDepth) +
                              " levels are not supported");
    for (uint64_t i = 0; i < count; ++i) {
      const GgufType sub = value_type("array element type");
      const uint64_t sub_pos = pos_;
      const uint64_t sub_count = u64("array length");
      skip_array(sub, sub_count, sub_pos, depth + 1);
    }
  }

  void parse_metadata() {
    f_.kvs_.reserve(n_kv_);
    for (uint64_t i = 0; i < n_kv_; ++i) {
      ctx_ = Ctx::kKey;
      ctx_index_ = i;
      ctx_named_ = false;
      GgufKv kv;
      kv.key = str("key", kGgufMaxKeyBytes);
      ctx_name_ = kv.key;
      ctx_named_ = true;
      kv.type = value_type("value type");
      kv.offset = pos_;
      const uint64_t start = pos_;
      if (const uint64_t sz = gguf_detail::scalar_size(kv.type); sz != 0) {
        need(sz, gguf_type_name(kv.type));
        pos_ += sz;
      } else if (kv.type == GgufType::kString) {
        const std::string_view s = str("string", std::numeric_limits<uint64_t>::max());
        kv.payload =
            std::span<const std::byte>(reinterpret_cast<const std::byte*>(s.data()), s.size());
        f_.kvs_.push_back(kv);
        continue;
      } else {  // array
        kv.element_type = value_type("array element type");
        const uint64_t count_pos = pos_;
        kv.count = u64("array length");
        const uint64_t elems = pos_;
        skip_array(kv.element_type, kv.count, count_pos, 1);
        kv.payload = std::span<const std::byte>(p_ + elems, pos_ - elems);
        f_.kvs_.push_back(kv);
        continue;
      }
      kv.payload = std::span<const std::byte>(p_ + start, pos_ - start);
      f_.kvs_.push_back(kv);
    }
    ctx_named_ = false;
  }

  void index_metadata() {
    auto& idx = f_.kv_index_;
    const auto& kvs = f_.kvs_;
    idx.resize(kvs.size());
    for (uint32_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) {
      return kvs[a].key < kvs[b].key || (kvs[a].key == kvs[b].key && a < b);
    });
    for (size_t i = 1; i < idx.size(); ++i) {
      if (kvs[idx[i - 1]].key == kvs[idx[i]].key) {
        const GgufKv& dup = kvs[idx[i]];
        ctx_ = Ctx::kKey;
        ctx_name_ = dup.key;
        ctx_named_ = true;
        fail(dup.offset - 4 - 8 - dup.key.size(),
             "duplicate metadata key '" + gguf_detail::printable(dup.key) + "'");
      }
    }
  }

  void read_alignment() {
    const GgufKv* a = f_.find("general.alignment");
    if (a == nullptr) return;
    ctx_ = Ctx::kKey;
    ctx_name_ = a->key;
    ctx_named_ = true;
    const auto v = gguf_detail::scalar_to_u64(*a);
    if (!v)
      fail_ctx(a->offset,
               std::string("must be an unsigned integer, not ") + gguf_detail::describe_type(*a));
    if (*v == 0 || !std::has_single_bit(*v) || *v > (uint64_t{1} << 30))
      fail_ctx(a->offset,
               "alignment " + std::to_string(*v) + " is not a power of two between 1 and 2^30");
    f_.alignment_ = static_cast<uint32_t>(*v);
    ctx_named_ = false;
  }

  void parse_tensor_infos() {
    auto& ts = f_.tensors_;
    ts.reserve(n_tensors_);
    tensor_name_pos_.reserve(n_tensors_);
    tensor_offset_pos_.reserve(n_tensors_);
    for (uint64_t i = 0; i < n_tensors_; ++i) {
      ctx_ = Ctx::kTensor;
      ctx_index_ = i;
      ctx_named_ = false;
      GgufTensorInfo t;
      tensor_name_pos_.push_back(pos_);
      t.name = str("name", kGgufMaxKeyBytes);
      ctx_name_ = t.name;
      ctx_named_ = true;
      const uint64_t nd_pos = pos_;
      t.n_dims = u32("dimension count");
      if (t.n_dims > kGgufMaxDims)
        fail_ctx(nd_pos, "has " + std::to_string(t.n_dims) + " dimensions, at most " +
                             std::to_string(kGgufMaxDims) + " are supported");
      t.dims = {1, 1, 1, 1};
      uint64_t ne = 1;
      for (uint32_t d = 0; d < t.n_dims; ++d) {
        const uint64_t dpos = pos_;
        const uint64_t v = u64("dimension");
        if (v > kInt64Max)
          fail_ctx(dpos, "dimension " + std::to_string(d) + " is " + std::to_string(v) +
                             ", above INT64_MAX");
        if (v != 0 && ne > kInt64Max / v)
          fail_ctx(dpos, "the element count overflows INT64_MAX at dimension " + std::to_string(d) +
                             " (" + std::to_string(v) + ")");
        ne *= v;
        t.dims[d] = v;
      }
      t.n_elements = ne;
      const uint64_t type_pos = pos_;
      t.type = u32("ggml type");
      tensor_offset_pos_.push_back(pos_);
      t.offset = u64("data offset");
      if (const auto tr = ggml_type_traits(t.type)) {
        if (t.dims[0] % tr->block_size != 0)
          fail_ctx(type_pos, "dimension 0 (" + std::to_string(t.dims[0]) +
                                 ") is not a multiple of the " + tr->name + " block size " +
                                 std::to_string(tr->block_size));
        const uint64_t blocks = ne / tr->block_size;
        if (blocks > std::numeric_limits<uint64_t>::max() / tr->type_size)
          fail_ctx(type_pos, "the byte size overflows (" + std::to_string(ne) + " " + tr->name +
                                 " elements)");
        t.n_bytes = blocks * tr->type_size;
      }
      ts.push_back(t);
    }
    ctx_named_ = false;
  }

  void index_tensors() {
    auto& idx = f_.tensor_index_;
    const auto& ts = f_.tensors_;
    idx.resize(ts.size());
    for (uint32_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) {
      return ts[a].name < ts[b].name || (ts[a].name == ts[b].name && a < b);
    });
    for (size_t i = 1; i < idx.size(); ++i) {
      if (ts[idx[i - 1]].name == ts[idx[i]].name) {
        ctx_ = Ctx::kTensor;
        ctx_name_ = ts[idx[i]].name;
        ctx_named_ = true;
        fail(tensor_name_pos_[idx[i]],
             "duplicate tensor name '" + gguf_detail::printable(ts[idx[i]].name) + "'");
      }
    }
  }

  void place_tensors() {
    const uint64_t a = f_.alignment_;
    const uint64_t data_offset = pos_ + (a - pos_ % a) % a;
    f_.data_offset_ = data_offset;
    const uint64_t data_size = size_ > data_offset ? size_ - data_offset : 0;
    auto& ts = f_.tensors_;
    for (size_t i = 0; i < ts.size(); ++i) {
      GgufTensorInfo& t = ts[i];
      ctx_ = Ctx::kTensor;
      ctx_name_ = t.name;
      ctx_named_ = true;
      const uint64_t at = tensor_offset_pos_[i];
      if (t.offset % a != 0)
        fail_ctx(at, "data offset " + std::to_string(t.offset) +
                         " is not a multiple of the alignment " + std::to_string(a));
      if (data_offset > size_ || t.offset > data_size)
        fail_ctx(at, "data offset " + std::to_string(t.offset) +
                         " lies past the end of the file (the data section starts at " +
                         std::to_string(data_offset) + " and holds " + std::to_string(data_size) +
                         " bytes)");
      if (t.n_bytes && *t.n_bytes > data_size - t.offset)
        fail_ctx(at, std::to_string(*t.n_bytes) + " bytes at data offset " +
                         std::to_string(t.offset) +
                         " run past the end of the file (the data section starts at " +
                         std::to_string(data_offset) + " and holds " + std::to_string(data_size) +
                         " bytes)");
      t.file_offset = data_offset + t.offset;
      t.data = p_ + t.file_offset;
    }
    // Overlaps, among tensors whose size is known.
    std::vector<uint32_t> order(ts.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
      return ts[x].offset < ts[y].offset || (ts[x].offset == ts[y].offset && x < y);
    });
    uint64_t max_end = 0;
    const GgufTensorInfo* max_end_tensor = nullptr;
    for (const uint32_t i : order) {
      const GgufTensorInfo& t = ts[i];
      if (!t.n_bytes) continue;
      if (max_end_tensor != nullptr && t.offset<max_end&& * t.n_bytes> 0) {
        ctx_name_ = t.name;
        ctx_named_ = true;
        fail(tensor_offset_pos_[i], "tensors '" + gguf_detail::printable(max_end_tensor->name) +
                                        "' (data offset " + std::to_string(max_end_tensor->offset) +
                                        ", " + std::to_string(*max_end_tensor->n_bytes) +
                                        " bytes) and '" + gguf_detail::printable(t.name) +
                                        "' (data offset " + std::to_string(t.offset) + ", " +
                                        std::to_string(*t.n_bytes) + " bytes) overlap");
      }
      if (t.offset + *t.n_bytes > max_end) {
        max_end = t.offset + *t.n_bytes;
        max_end_tensor = &t;
      }
    }
    ctx_named_ = false;
  }
};

GgufFile GgufFile::from_memory(std::span<const std::byte> bytes, std::string name) {
  GgufFile f;
  f.bytes_ = bytes;
  f.name_ = std::move(name);
  GgufParser(f).parse();
  return f;
}

GgufFile GgufFile::open(const std::filesystem::path& path) {
  auto file = util::MappedFile::open(path, "GGUF file", "path");
  GgufFile f;
  f.bytes_ = std::span<const std::byte>(static_cast<const std::byte*>(file->data()), file->size());
  f.name_ = path.string();
  f.mapping_ = std::make_shared<const Mapping>(Mapping{std::move(file)});
  GgufParser(f).parse();
  return f;
}

}  // namespace nextok
