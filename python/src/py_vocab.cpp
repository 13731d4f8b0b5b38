// nextok.TokenizerInfo: a vocabulary (id -> bytes, EOS and special ids) and
// the logits width it is used with.
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "nextok/tokenizer.hpp"

namespace nextok::py {

std::shared_ptr<const TokenIndex> TokenizerInfo::index() const {
  std::call_once(index_once_, [&] { index_ = TokenIndex::build(vocab); });
  return index_;
}

namespace {

std::shared_ptr<const TokenizerInfo> make_info(std::shared_ptr<const Vocabulary> vocab,
                                               std::optional<std::size_t> vocab_size) {
  auto info = std::make_shared<TokenizerInfo>();
  const std::size_t width = vocab_size.value_or(vocab->size());
  if (width < vocab->size()) {
    throw nb::value_error(("vocab_size " + std::to_string(width) +
                           " is smaller than the tokenizer's " + std::to_string(vocab->size()) +
                           " token ids")
                              .c_str());
  }
  info->vocab = std::move(vocab);
  info->vocab_size = width;
  return info;
}

std::shared_ptr<const TokenizerInfo> from_token_bytes(const std::vector<nb::bytes>& tokens,
                                                      const std::vector<std::uint32_t>& eos_ids,
                                                      const std::vector<std::uint32_t>& special_ids,
                                                      std::optional<std::size_t> vocab_size) {
  std::vector<std::string> bytes;
  bytes.reserve(tokens.size());
  for (const auto& t : tokens) bytes.emplace_back(t.c_str(), t.size());
  return make_info(Vocabulary::from_token_bytes(bytes, eos_ids, special_ids), vocab_size);
}

std::vector<std::uint32_t> special_ids(const Vocabulary& v) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t id = 0; id < v.size(); ++id)
    if (v.is_special(id)) out.push_back(id);
  return out;
}

}  // namespace

void bind_vocab(nb::module_& m) {
  nb::class_<TokenizerInfo>(m, "TokenizerInfo",
                            "A tokenizer's vocabulary as nextok sees it: the bytes of every token "
                            "id, which ids are special and which end a sequence, and the logits "
                            "width (vocab_size, which may exceed the tokenizer). Immutable; share "
                            "one across grammars and threads.")
      .def_static(
          "from_path",
          [](const std::filesystem::path& path, std::optional<std::size_t> vocab_size) {
            return make_info(load_vocabulary(path), vocab_size);
          },
          nb::arg("path"), nb::arg("vocab_size") = nb::none(),
          "Loads a tokenizer.json file, a directory holding one (plus tokenizer_config.json "
          "etc. for EOS ids), or a .gguf file.")
      .def_static("from_token_bytes", &from_token_bytes, nb::arg("tokens"),
                  nb::arg("eos_ids") = std::vector<std::uint32_t>{},
                  nb::arg("special_ids") = std::vector<std::uint32_t>{},
                  nb::arg("vocab_size") = nb::none(),
                  "A vocabulary from each id's decoded bytes (index = token id). Empty entries "
                  "are holes; special_ids are control tokens (never allowed inside the "
                  "output); eos_ids end a sequence.")
      .def_static(
          "from_huggingface",
          [](nb::handle tokenizer, std::optional<std::size_t> vocab_size, nb::object eos_ids) {
            nb::object helper = nb::module_::import_("nextok._hf_vocab")
                                    .attr("huggingface_token_bytes")(tokenizer, eos_ids);
            auto tokens = nb::cast<std::vector<nb::bytes>>(helper[0]);
            auto eos = nb::cast<std::vector<std::uint32_t>>(helper[1]);
            auto special = nb::cast<std::vector<std::uint32_t>>(helper[2]);
            return from_token_bytes(tokens, eos, special, vocab_size);
          },
          nb::arg("tokenizer"), nb::arg("vocab_size") = nb::none(), nb::arg("eos_ids") = nb::none(),
          "From a `tokenizers.Tokenizer` or a transformers tokenizer: token bytes from the "
          "byte-level (GPT-2 alphabet) or SentencePiece (U+2581, <0xNN>) spellings, special "
          "ids from the added tokens, EOS from the tokenizer's eos_token_id (a bare "
          "`tokenizers.Tokenizer` needs eos_ids). vocab_size: the model's logits width.")
      .def_prop_ro(
          "vocab_size", [](const TokenizerInfo& t) { return t.vocab_size; },
          "The logits width masks and bitmasks are sized for.")
      .def_prop_ro(
          "num_tokens", [](const TokenizerInfo& t) { return t.vocab->size(); },
          "Token ids the tokenizer defines (one more than the largest).")
      .def_prop_ro(
          "bitmask_words", [](const TokenizerInfo& t) { return (t.vocab_size + 31) / 32; },
          "int32 words in one bitmask row: ceil(vocab_size / 32).")
      .def_prop_ro(
          "eos_ids",
          [](const TokenizerInfo& t) {
            auto ids = t.vocab->eos_ids();
            return std::vector<std::uint32_t>(ids.begin(), ids.end());
          },
          "End-of-sequence ids, ascending.")
      .def_prop_ro(
          "special_ids", [](const TokenizerInfo& t) { return special_ids(*t.vocab); },
          "Ids of special (control) tokens, ascending.")
      .def(
          "token_bytes",
          [](const TokenizerInfo& t, std::int64_t id) {
            if (id < 0 || static_cast<std::size_t>(id) >= t.vocab_size)
              throw nb::index_error(("token id " + std::to_string(id) + " out of range").c_str());
            auto b = t.vocab->bytes(static_cast<std::uint32_t>(id));
            return nb::bytes(b.data(), b.size());
          },
          nb::arg("token_id"), "The raw bytes a token decodes to (b\"\" for holes).")
      .def(
          "token_kind",
          [](const TokenizerInfo& t, std::int64_t id) {
            if (id < 0 || static_cast<std::size_t>(id) >= t.vocab_size)
              throw nb::index_error(("token id " + std::to_string(id) + " out of range").c_str());
            return std::string(token_kind_name(t.vocab->kind(static_cast<std::uint32_t>(id))));
          },
          nb::arg("token_id"), "\"normal\", \"byte\", \"added\", \"special\" or \"absent\".")
      .def("__repr__", [](const TokenizerInfo& t) {
        return "TokenizerInfo(num_tokens=" + std::to_string(t.vocab->size()) +
               ", vocab_size=" + std::to_string(t.vocab_size) + ")";
      });
}

}  // namespace nextok::py
