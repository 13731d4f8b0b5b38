// A reader for GGUF files (versions 2 and 3, little-endian): metadata and
// tensor infos, validated up front, with zero-copy views into the file.
//
// GgufFile::open memory-maps the file read-only; every string_view, span and
// tensor data pointer handed out stays valid while any copy of the GgufFile
// (which shares the mapping) is alive. GgufFile::from_memory does not copy:
// the caller keeps the bytes alive for as long as the GgufFile is used.
//
// Everything is validated when the file is opened: magic, version, every
// length against the bytes that remain (before anything is allocated), value
// and element types, key and tensor name uniqueness, general.alignment, the
// dimension product, and that each tensor of a known ggml type lies inside
// the data section, aligned, and overlaps no other. Failures throw
// nextok::Error: ErrorCode::kIo when the file cannot be opened or mapped,
// ErrorCode::kMalformedFile for invalid or truncated content. Messages name
// the file, the byte offset and the problem. Accessors afterwards only throw
// on a type mismatch (kMalformedFile) or when the data of a tensor of an
// unknown ggml type is asked for (kUnsupported).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nextok {

// Metadata value types, as numbered by the GGUF specification.
enum class GgufType : uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};

// "u8", "i32", "string", "array", …; "?" for values outside the enum.
const char* gguf_type_name(GgufType type) noexcept;

// Limits that keep a hostile file from asking for absurd work. A file that
// exceeds one is rejected with kMalformedFile and a message naming the limit.
inline constexpr uint64_t kGgufMaxMetadataKeys = uint64_t{1} << 20;
inline constexpr uint64_t kGgufMaxTensors = uint64_t{1} << 20;
inline constexpr uint64_t kGgufMaxArrayElements = uint64_t{1} << 28;
inline constexpr uint32_t kGgufMaxArrayDepth = 4;  // arrays of arrays of …
inline constexpr uint64_t kGgufMaxKeyBytes = 65535;
inline constexpr uint32_t kGgufMaxDims = 4;
inline constexpr uint32_t kGgufDefaultAlignment = 32;

// Block layout of a ggml tensor type: `type_size` bytes hold `block_size`
// consecutive elements of dimension 0.
struct GgmlTypeTraits {
  const char* name;  // "F32", "Q4_K", …
  uint32_t block_size;
  uint32_t type_size;
};

// Traits of ggml type `type` (F32, F16, BF16, Q4_0 … Q8_K, the IQ and TQ
// families, I8 … F64, MXFP4); nullopt for an id nextok does not know.
std::optional<GgmlTypeTraits> ggml_type_traits(uint32_t type) noexcept;

struct GgufTensorInfo {
  std::string_view name;
  uint32_t type = 0;                // ggml type id (0 = F32, 1 = F16, 30 = BF16, …)
  uint32_t n_dims = 0;              // 0 … 4
  std::array<uint64_t, 4> dims{};   // ne[0] is the fastest-moving; unused dims are 1
  uint64_t n_elements = 0;          // product of dims
  uint64_t offset = 0;              // relative to the start of the data section
  uint64_t file_offset = 0;         // absolute offset in the file
  std::optional<uint64_t> n_bytes;  // nullopt when the ggml type is unknown
  const std::byte* data = nullptr;  // start of the tensor's bytes in the file
};

// One metadata entry, without interpretation. For scalars `payload` holds
// the little-endian value bytes; for strings the string bytes; for arrays the
// encoded elements (fixed-size elements are packed; string elements are
// u64 length + bytes each).
struct GgufKv {
  std::string_view key;
  GgufType type = GgufType::kU8;
  GgufType element_type = GgufType::kU8;  // arrays only
  uint64_t count = 1;                     // arrays: element count; otherwise 1
  uint64_t offset = 0;                    // file offset of the value (after the type tag)
  std::span<const std::byte> payload;
};

class GgufFile {
 public:
  // Maps `path` read-only and parses it. kIo when it cannot be opened or
  // mapped, kMalformedFile when the content is not a valid GGUF file.
  static GgufFile open(const std::filesystem::path& path);
  // Parses bytes the caller owns and keeps alive (no copy is made).
  static GgufFile from_memory(std::span<const std::byte> bytes, std::string name = "<memory>");

  uint32_t version() const noexcept { return version_; }
  uint32_t alignment() const noexcept { return alignment_; }
  const std::string& name() const noexcept { return name_; }
  std::span<const std::byte> bytes() const noexcept { return bytes_; }
  uint64_t data_offset() const noexcept { return data_offset_; }  // start of the data section

  // ---- metadata. Scalar getters return nullopt when the key is absent and
  // throw kMalformedFile when it is present with an incompatible type.
  bool has(std::string_view key) const noexcept { return find(key) != nullptr; }
  const GgufKv* find(std::string_view key) const noexcept;
  std::span<const GgufKv> metadata() const noexcept { return kvs_; }  // file order
  std::vector<std::string_view> keys() const;                         // file order

  std::optional<std::string_view> get_string(std::string_view key) const;
  // Any integer type, widened; a u64 above INT64_MAX throws. Not bool.
  std::optional<int64_t> get_int(std::string_view key) const;
  // f32 / f64, or any integer type converted.
  std::optional<double> get_float(std::string_view key) const;
  // bool only.
  std::optional<bool> get_bool(std::string_view key) const;

  // Arrays: nullopt when the key is absent; throws kMalformedFile when it is
  // present but not an array of a compatible element type. An empty array
  // gives an empty vector.
  // String views point into the file; no string is copied.
  std::optional<std::vector<std::string_view>> get_string_array(std::string_view key) const;
  // Any integer element type, widened (a u64 above INT64_MAX throws).
  std::optional<std::vector<int64_t>> get_int_array(std::string_view key) const;
  // f32 / f64 elements (f64 narrowed), or any integer element type converted.
  std::optional<std::vector<float>> get_float_array(std::string_view key) const;

  // ---- tensors, in file order.
  std::span<const GgufTensorInfo> tensors() const noexcept { return tensors_; }
  const GgufTensorInfo* find_tensor(std::string_view name) const noexcept;
  // The tensor's bytes. kUnsupported when its ggml type is unknown.
  std::span<const std::byte> tensor_data(const GgufTensorInfo& tensor) const;

 private:
  struct Mapping;
  friend class GgufParser;
  GgufFile() = default;

  std::shared_ptr<const Mapping> mapping_;  // null for from_memory
  std::span<const std::byte> bytes_;
  std::string name_;
  uint32_t version_ = 0;
  uint32_t alignment_ = kGgufDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<GgufKv> kvs_;
  std::vector<uint32_t> kv_index_;  // kvs_ indices sorted by key
  std::vector<GgufTensorInfo> tensors_;
  std::vector<uint32_t> tensor_index_;  // tensors_ indices sorted by name
};

}  // namespace nextok
