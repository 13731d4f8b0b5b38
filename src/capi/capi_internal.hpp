// Shared pieces of the C API: the handle structs and the guard that turns
// every C++ exception into a status code and a thread-local message.
#pragma once

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <mutex>
#include <new>
#include <optional>

#include "nextok/error.hpp"
#include "nextok/json_schema.hpp"
#include "nextok/nextok.h"
#include "nextok/sampler.hpp"
#include "nextok/tokenizer.hpp"

struct nextok_tokenizer {
  explicit nextok_tokenizer(nextok::Tokenizer t) : tok(std::move(t)) {}
  nextok::Tokenizer tok;
  // Built by the first grammar compile, then shared by every grammar.
  mutable std::once_flag index_once;
  mutable std::shared_ptr<const nextok::TokenIndex> index;
};

struct nextok_sampler {
  nextok::SamplerConfig config;
  nextok::PenaltyConfig penalties;
  size_t vocab_size = 0;  // 0 = any logits width
  std::unique_ptr<nextok::Sampler> sampler;
};

struct nextok_grammar {
  std::shared_ptr<const nextok::JsonGrammar> grammar;
  size_t vocab_size = 0;
};

struct nextok_matcher {
  std::unique_ptr<nextok::JsonConstraint> constraint;
  size_t vocab_size = 0;
};

namespace nextok::capi {

// Records a failure for nextok_last_error(); never throws or allocates.
nextok_status fail(nextok_status status, const char* message, const char* param = "") noexcept;
// Empties the thread's message (a call that succeeds).
void clear_error() noexcept;
nextok_status status_of(ErrorCode code) noexcept;

// Throws Error{kInvalidArgument, name} when p is null.
inline void require(const void* p, const char* name) {
  if (p == nullptr) throw Error(ErrorCode::kInvalidArgument, name, std::string(name) + " is NULL");
}

// Runs body; maps nextok::Error, std::bad_alloc and every other exception
// to a status. Nothing escapes.
template <class F>
nextok_status guarded(F&& body) noexcept {
  try {
    clear_error();
    const nextok_status s = body();
    return s;
  } catch (const Error& e) {
    return fail(status_of(e.code()), e.what(), e.param().c_str());
  } catch (const std::filesystem::filesystem_error& e) {
    return fail(NEXTOK_IO, e.what());
  } catch (const std::bad_alloc&) {
    return fail(NEXTOK_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail(NEXTOK_INTERNAL, e.what());
  } catch (...) {
    return fail(NEXTOK_INTERNAL, "unknown exception inside nextok");
  }
}

// The size-query convention of nextok.h: *n = need; write when it fits.
template <class T, class Src>
nextok_status copy_out(const Src& src, T* out, size_t cap, size_t* n) {
  require(n, "n");
  *n = src.size();
  if (src.size() > cap) {
    if (cap == 0 && out == nullptr) return NEXTOK_OK;
    return fail(NEXTOK_BUFFER_TOO_SMALL, "output buffer too small; *n holds the size needed",
                "cap");
  }
  if (!src.empty()) {
    require(out, "out");
    std::copy(src.begin(), src.end(), out);
  }
  return NEXTOK_OK;
}

}  // namespace nextok::capi
