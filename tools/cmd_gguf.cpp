// `nextok gguf-info`: the metadata and tensor infos of a GGUF file, as text
// or JSON. Arrays longer than 16 elements are summarised (count + first 8)
// unless --full is given.
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.hpp"
#include "nextok/gguf.hpp"

namespace nextok::tools {
namespace {

using Json = nlohmann::ordered_json;

constexpr uint64_t kSummaryThreshold = 16;
constexpr uint64_t kSummaryHead = 8;

struct GgufInfoArgs {
  std::string file;
  bool json = false;
  bool full = false;
  bool time = false;
};

template <class T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Decodes one scalar or string element at `p` (already validated by the
// reader) and advances `p` past it.
Json decode_one(GgufType t, const std::byte*& p);

// Decodes up to `limit` of the `count` elements at `p`; `p` ends after the
// last one decoded.
Json decode_elems(GgufType et, const std::byte*& p, uint64_t count, uint64_t limit) {
  Json arr = Json::array();
  for (uint64_t i = 0; i < count && i < limit; ++i) {
    if (et == GgufType::kArray) {
      const auto sub = static_cast<GgufType>(load<uint32_t>(p));
      const auto n = load<uint64_t>(p + 4);
      p += 12;
      Json o;
      o["type"] = "array";
      o["element_type"] = gguf_type_name(sub);
      o["count"] = n;
      o["value"] = decode_elems(sub, p, n, UINT64_MAX);
      arr.push_back(std::move(o));
    } else {
      arr.push_back(decode_one(et, p));
    }
  }
  return arr;
}

Json decode_one(GgufType t, const std::byte*& p) {
  Json v;
  switch (t) {
    case GgufType::kU8:
      v = load<uint8_t>(p);
      p += 1;
      break;
    case GgufType::kI8:
      v = load<int8_t>(p);
      p += 1;
      break;
    case GgufType::kU16:
      v = load<uint16_t>(p);
      p += 2;
      break;
    case GgufType::kI16:
      v = load<int16_t>(p);
      p += 2;
      break;
    case GgufType::kU32:
      v = load<uint32_t>(p);
      p += 4;
      break;
    case GgufType::kI32:
      v = load<int32_t>(p);
      p += 4;
      break;
    case GgufType::kF32:
      v = static_cast<double>(load<float>(p));
      p += 4;
      break;
    case GgufType::kBool:
      v = load<uint8_t>(p) != 0;
      p += 1;
      break;
    case GgufType::kU64:
      v = load<uint64_t>(p);
      p += 8;
      break;
    case GgufType::kI64:
      v = load<int64_t>(p);
      p += 8;
      break;
    case GgufType::kF64:
      v = load<double>(p);
      p += 8;
      break;
    case GgufType::kString: {
      const auto n = load<uint64_t>(p);
      v = std::string(reinterpret_cast<const char*>(p + 8), n);
      p += 8 + n;
      break;
    }
    case GgufType::kArray:
      break;  // handled by decode_elems
  }
  return v;
}

Json kv_json(const GgufKv& kv, bool full) {
  Json o;
  o["type"] = gguf_type_name(kv.type);
  const std::byte* p = kv.payload.data();
  if (kv.type == GgufType::kString) {
    o["value"] = std::string(reinterpret_cast<const char*>(p), kv.payload.size());
  } else if (kv.type != GgufType::kArray) {
    o["value"] = decode_one(kv.type, p);
  } else {
    o["element_type"] = gguf_type_name(kv.element_type);
    o["count"] = kv.count;
    if (full || kv.count <= kSummaryThreshold) {
      o["value"] = decode_elems(kv.element_type, p, kv.count, UINT64_MAX);
    } else {
      o["head"] = decode_elems(kv.element_type, p, kv.count, kSummaryHead);
      o["truncated"] = true;
    }
  }
  return o;
}

Json tensor_json(const GgufTensorInfo& t) {
  Json o;
  o["name"] = std::string(t.name);
  const auto tr = ggml_type_traits(t.type);
  o["type"] = tr ? tr->name : ("ggml_type_" + std::to_string(t.type));
  o["type_id"] = t.type;
  Json dims = Json::array();
  for (uint32_t d = 0; d < t.n_dims; ++d) dims.push_back(t.dims[d]);
  o["dims"] = std::move(dims);
  o["n_elements"] = t.n_elements;
  o["offset"] = t.offset;
  o["file_offset"] = t.file_offset;
  if (t.n_bytes)
    o["n_bytes"] = *t.n_bytes;
  else
    o["n_bytes"] = nullptr;
  return o;
}

std::string short_text(const Json& v, bool full) {
  std::string s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (!full && s.size() > 160) s = s.substr(0, 157) + "...";
  return s;
}

int run_gguf_info(const GgufInfoArgs& a) {
  const auto t0 = std::chrono::steady_clock::now();
  const GgufFile f = GgufFile::open(a.file);
  const auto t1 = std::chrono::steady_clock::now();
  if (a.time) {
    // Time the largest string array's extraction too (a tokenizer's vocabulary).
    const GgufKv* biggest = nullptr;
    for (const auto& kv : f.metadata())
      if (kv.type == GgufType::kArray && kv.element_type == GgufType::kString &&
          (biggest == nullptr || kv.count > biggest->count))
        biggest = &kv;
    const auto t2 = std::chrono::steady_clock::now();
    size_t n = 0;
    if (biggest != nullptr) n = f.get_string_array(biggest->key)->size();
    const auto t3 = std::chrono::steady_clock::now();
    const auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
    std::fprintf(stderr,
                 "open+parse: %.3f ms (%zu keys, %zu tensors); string array of %zu: %.3f ms\n",
                 ms(t1 - t0), f.metadata().size(), f.tensors().size(), n, ms(t3 - t2));
  }

  if (a.json) {
    Json j;
    j["file"] = a.file;
    j["version"] = f.version();
    j["alignment"] = f.alignment();
    j["data_offset"] = f.data_offset();
    Json md = Json::object();
    for (const auto& kv : f.metadata()) md[std::string(kv.key)] = kv_json(kv, a.full);
    j["metadata"] = std::move(md);
    Json ts = Json::array();
    for (const auto& t : f.tensors()) ts.push_back(tensor_json(t));
    j["tensors"] = std::move(ts);
    std::printf("%s\n", j.dump(2, ' ', false, Json::error_handler_t::replace).c_str());
    return 0;
  }

  std::printf("%s: GGUF v%u, alignment %u, %zu metadata keys, %zu tensors, data at offset %" PRIu64
              "\n",
              a.file.c_str(), f.version(), f.alignment(), f.metadata().size(), f.tensors().size(),
              f.data_offset());
  for (const auto& kv : f.metadata()) {
    const Json o = kv_json(kv, a.full);
    std::string type = gguf_type_name(kv.type);
    if (kv.type == GgufType::kArray)
      type = "array<" + std::string(gguf_type_name(kv.element_type)) + ">[" +
             std::to_string(kv.count) + "]";
    const Json& shown = o.contains("value") ? o["value"] : o["head"];
    std::printf("  %-40s %-22s %s%s\n", std::string(kv.key).c_str(), type.c_str(),
                short_text(shown, a.full).c_str(), o.contains("truncated") ? " ..." : "");
  }
  for (const auto& t : f.tensors()) {
    const auto tr = ggml_type_traits(t.type);
    std::string dims;
    for (uint32_t d = 0; d < t.n_dims; ++d) dims += (d ? " x " : "") + std::to_string(t.dims[d]);
    std::printf("  tensor %-40s %-8s [%s] offset %" PRIu64 " bytes %s\n",
                std::string(t.name).c_str(),
                tr ? tr->name : ("type " + std::to_string(t.type)).c_str(), dims.c_str(), t.offset,
                t.n_bytes ? std::to_string(*t.n_bytes).c_str() : "?");
  }
  return 0;
}

}  // namespace

std::function<int()> add_gguf_info(CLI::App& app) {
  auto a = std::make_shared<GgufInfoArgs>();
  CLI::App* sub =
      app.add_subcommand("gguf-info", "Print the metadata and tensor infos of a GGUF file");
  sub->add_option("file", a->file, "GGUF file")->required();
  sub->add_flag("--json", a->json, "Print JSON");
  sub->add_flag("--full", a->full, "Print arrays in full instead of a summary");
  sub->add_flag("--time", a->time, "Report the parse time on stderr");
  return [a, sub]() {
    if (!sub->parsed()) return -1;
    return run_gguf_info(*a);
  };
}

}  // namespace nextok::tools
