// C API: tokenizer handles (loading, vocabulary queries, encode, decode).
#include <string>
#include <vector>

#include "capi/capi_internal.hpp"

using nextok::Error;
using nextok::ErrorCode;
using nextok::capi::copy_out;
using nextok::capi::guarded;
using nextok::capi::require;

namespace {

void require_id(const nextok_tokenizer* tok, uint32_t id) {
  if (id >= tok->tok.vocab().size()) {
    throw Error(ErrorCode::kInvalidArgument, "id",
                "token id " + std::to_string(id) + " is outside the vocabulary (size " +
                    std::to_string(tok->tok.vocab().size()) + ")");
  }
}

}  // namespace

extern "C" {

nextok_status nextok_tokenizer_load(const char* path, nextok_tokenizer** out) {
  return guarded([&] {
    require(out, "out");
    *out = nullptr;
    require(path, "path");
    auto handle = std::make_unique<nextok_tokenizer>(nextok::Tokenizer::from_path(path));
    *out = handle.release();
    return NEXTOK_OK;
  });
}

void nextok_tokenizer_free(nextok_tokenizer* tok) {
  delete tok;
}

size_t nextok_tokenizer_vocab_size(const nextok_tokenizer* tok) {
  return tok == nullptr ? 0 : tok->tok.vocab().size();
}

nextok_status nextok_tokenizer_eos_token(const nextok_tokenizer* tok, uint32_t* out) {
  return guarded([&] {
    require(tok, "tok");
    require(out, "out");
    const auto eos = tok->tok.vocab().eos_ids();
    if (eos.empty())
      throw Error(ErrorCode::kUnsupported, "eos", "the tokenizer names no EOS token");
    *out = eos.front();
    return NEXTOK_OK;
  });
}

nextok_status nextok_tokenizer_eos_tokens(const nextok_tokenizer* tok, uint32_t* out, size_t cap,
                                          size_t* n) {
  return guarded([&] {
    require(tok, "tok");
    return copy_out(tok->tok.vocab().eos_ids(), out, cap, n);
  });
}

bool nextok_tokenizer_is_eos(const nextok_tokenizer* tok, uint32_t id) {
  return tok != nullptr && tok->tok.vocab().is_eos(id);
}

nextok_status nextok_tokenizer_token_bytes(const nextok_tokenizer* tok, uint32_t id, char* out,
                                           size_t cap, size_t* n) {
  return guarded([&] {
    require(tok, "tok");
    require_id(tok, id);
    return copy_out(tok->tok.vocab().bytes(id), out, cap, n);
  });
}

nextok_status nextok_tokenize(const nextok_tokenizer* tok, const char* text, size_t len,
                              bool parse_special, uint32_t* out, size_t cap, size_t* n) {
  return guarded([&] {
    require(tok, "tok");
    if (len > 0) require(text, "text");
    nextok::EncodeOptions opt;
    opt.parse_special = parse_special;
    const std::vector<uint32_t> ids =
        tok->tok.encode(std::string_view(len > 0 ? text : "", len), opt);
    return copy_out(ids, out, cap, n);
  });
}

nextok_status nextok_detokenize(const nextok_tokenizer* tok, const uint32_t* ids, size_t n_ids,
                                bool skip_special, char* out, size_t cap, size_t* n) {
  return guarded([&] {
    require(tok, "tok");
    if (n_ids > 0) require(ids, "ids");
    for (size_t i = 0; i < n_ids; ++i) require_id(tok, ids[i]);
    nextok::DecodeOptions opt;
    opt.skip_special = skip_special;
    const std::string text = tok->tok.decode(std::span<const uint32_t>(ids, n_ids), opt);
    return copy_out(text, out, cap, n);
  });
}

}  // extern "C"
