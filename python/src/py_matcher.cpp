// nextok.Grammar (a compiled JSON schema, GBNF grammar, regex or choice)
// and nextok.Matcher (one
// sequence's state in it: accept, validate, rollback, bitmask fill).
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#include "nextok/error.hpp"
#include "nextok/mask.hpp"

namespace nextok::py {

namespace {

JsonConstraintOptions options(bool strict, std::uint32_t max_whitespace,
                              std::uint32_t max_compile_ms) {
  if (max_whitespace > 255) throw nb::value_error("max_whitespace must be in [0, 255]");
  JsonConstraintOptions o;
  o.strict = strict;
  o.max_whitespace = static_cast<std::uint8_t>(max_whitespace);
  o.limits.max_compile_ms = max_compile_ms;
  return o;
}

std::string schema_text(nb::handle schema) {
  if (nb::isinstance<nb::str>(schema)) return nb::cast<std::string>(schema);
  if (nb::isinstance<nb::bytes>(schema)) {
    auto b = nb::cast<nb::bytes>(schema);
    return std::string(b.c_str(), b.size());
  }
  nb::object dumps = nb::module_::import_("json").attr("dumps");
  return nb::cast<std::string>(dumps(schema));
}

std::uint32_t token_id(const Matcher& m, std::int64_t token) {
  if (token < 0 || static_cast<std::size_t>(token) >= m.info->vocab_size) {
    throw Error(ErrorCode::kInvalidArgument, "token",
                "token " + std::to_string(token) +
                    " is outside [0, vocab_size=" + std::to_string(m.info->vocab_size) + ")");
  }
  return static_cast<std::uint32_t>(token);
}

// Accepts all tokens or none: on a refusal the ones taken are rolled back.
void accept_all(Matcher& m, const std::vector<std::int64_t>& tokens) {
  std::size_t done = 0;
  try {
    for (std::int64_t t : tokens) {
      m.constraint.advance(token_id(m, t));
      ++done;
    }
  } catch (const Error& e) {
    m.constraint.rollback(done);
    throw Error(e.code(), e.param(),
                std::string(e.what()) + " (tokens[" + std::to_string(done) + "])");
  }
}

std::size_t validate(const Matcher& m, const std::vector<std::int64_t>& tokens) {
  Matcher probe(m);
  std::size_t n = 0;
  for (std::int64_t t : tokens) {
    if (t < 0 || static_cast<std::size_t>(t) >= m.info->vocab_size) break;
    try {
      probe.constraint.advance(static_cast<std::uint32_t>(t));
    } catch (const Error&) {
      break;
    }
    ++n;
  }
  return n;
}

void fill_row(Matcher& m, const MutArray& bitmask, std::int64_t index) {
  const BitmaskView v = bitmask_view(bitmask, "bitmask");
  if (v.words != m.words()) {
    throw nb::value_error(("bitmask rows have " + std::to_string(v.words) +
                           " words; this vocabulary needs " + std::to_string(m.words()))
                              .c_str());
  }
  if (index < 0 || static_cast<std::size_t>(index) >= v.rows) {
    throw nb::index_error(("index " + std::to_string(index) + " outside the bitmask's " +
                           std::to_string(v.rows) + " rows")
                              .c_str());
  }
  nb::gil_scoped_release release;
  m.constraint.step_mask(v.row(static_cast<std::size_t>(index)));
}

std::vector<std::uint32_t> allowed_ids(Matcher& m) {
  std::vector<std::uint32_t> mask(m.words());
  m.constraint.step_mask(mask);
  std::vector<std::uint32_t> ids;
  for (std::size_t t = 0; t < m.info->vocab_size; ++t)
    if (bitmask_allows(mask, t)) ids.push_back(static_cast<std::uint32_t>(t));
  return ids;
}

}  // namespace

void bind_matcher(nb::module_& m) {
  nb::class_<Grammar>(m, "Grammar",
                      "A compiled grammar (JSON schema, GBNF, regex or choice) for one vocabulary. "
                      "Immutable: compile once and "
                      "share it across matchers and threads.")
      .def_static(
          "json_schema",
          [](nb::handle schema, std::shared_ptr<const TokenizerInfo> info, bool strict,
             std::uint32_t max_whitespace, std::uint32_t max_compile_ms) {
            if (!info) throw nb::type_error("tokenizer_info must be a TokenizerInfo");
            const std::string text = schema_text(schema);
            const auto opt = options(strict, max_whitespace, max_compile_ms);
            auto index = info->index();
            nb::gil_scoped_release release;
            return Grammar{JsonGrammar::from_schema(std::move(index), text, opt), info, nullptr};
          },
          nb::arg("schema"), nb::arg("tokenizer_info"), nb::kw_only(), nb::arg("strict") = true,
          nb::arg("max_whitespace") = 20, nb::arg("max_compile_ms") = 2000,
          "Compiles a JSON Schema (a str, bytes or anything json.dumps accepts). strict: a "
          "keyword that constrains but is not enforced is an error (else a warning). "
          "max_whitespace: longest whitespace run between JSON tokens (0 = compact). "
          "Raises NextokError naming the JSON pointer of a bad or unsupported keyword.")
      .def_static(
          "json_object",
          [](std::shared_ptr<const TokenizerInfo> info, std::uint32_t max_whitespace) {
            if (!info) throw nb::type_error("tokenizer_info must be a TokenizerInfo");
            const auto opt = options(true, max_whitespace, 2000);
            return Grammar{JsonGrammar::any_object(info->index(), opt), info, nullptr};
          },
          nb::arg("tokenizer_info"), nb::kw_only(), nb::arg("max_whitespace") = 20,
          "Any JSON object (response_format json_object).")
      .def_static(
          "regex",
          [](const std::string& pattern, std::shared_ptr<const TokenizerInfo> info) {
            if (!info) throw nb::type_error("tokenizer_info must be a TokenizerInfo");
            auto index = info->index();
            nb::gil_scoped_release release;
            return Grammar{nullptr, info, ::nextok::Grammar::regex(std::move(index), pattern)};
          },
          nb::arg("pattern"), nb::arg("tokenizer_info"),
          "The output full-matches an ECMA-262 regex (no lookaround or backreferences). "
          "Raises NextokError (param \"pattern\") on syntax errors and unsupported "
          "constructs.")
      .def_static(
          "choice",
          [](const std::vector<std::string>& strings, std::shared_ptr<const TokenizerInfo> info) {
            if (!info) throw nb::type_error("tokenizer_info must be a TokenizerInfo");
            auto index = info->index();
            nb::gil_scoped_release release;
            return Grammar{nullptr, info, ::nextok::Grammar::choice(std::move(index), strings)};
          },
          nb::arg("strings"), nb::arg("tokenizer_info"), "The output is exactly one of strings.")
      .def_static(
          "gbnf",
          [](const std::string& text, std::shared_ptr<const TokenizerInfo> info) {
            if (!info) throw nb::type_error("tokenizer_info must be a TokenizerInfo");
            auto index = info->index();
            nb::gil_scoped_release release;
            return Grammar{nullptr, info, ::nextok::Grammar::gbnf(std::move(index), text)};
          },
          nb::arg("text"), nb::arg("tokenizer_info"),
          "A GBNF grammar (llama.cpp's format; `root` is the start). Raises NextokError "
          "(param \"grammar\", message \"line:column: ...\") on errors.")
      .def_static(
          "lark",
          [](const std::string& text, std::shared_ptr<const TokenizerInfo> info) {
            if (!info) throw nb::type_error("tokenizer_info must be a TokenizerInfo");
            auto index = info->index();
            nb::gil_scoped_release release;
            return Grammar{nullptr, info, ::nextok::Grammar::lark(std::move(index), text)};
          },
          nb::arg("text"), nb::arg("tokenizer_info"),
          "A Lark grammar from its rule `start`: the language of lark's Earley parser with "
          "the dynamic_complete lexer (Python regex terminals, %import common, %ignore). "
          "Raises NextokError (param \"grammar\", message \"line:column: ...\") on errors.")
      .def_static(
          "structural_tag",
          [](const std::string& json_text, std::shared_ptr<const TokenizerInfo> info) {
            if (!info) throw nb::type_error("tokenizer_info must be a TokenizerInfo");
            auto index = info->index();
            nb::gil_scoped_release release;
            return Grammar{nullptr, info,
                           ::nextok::Grammar::structural_tag(std::move(index), json_text)};
          },
          nb::arg("json_text"), nb::arg("tokenizer_info"),
          "XGrammar's structural tag as JSON text ({\"type\": \"structural_tag\", \"format\": "
          "{...}}, or the older {\"structures\": [...], \"triggers\": [...]}): tags, "
          "triggered tags, tags with a separator, JSON schema content, free text. Raises "
          "NextokError (param \"structural_tag\") on malformed or unsupported formats.")
      .def_prop_ro(
          "warnings",
          [](const Grammar& g) {
            return g.grammar ? g.grammar->warnings() : std::vector<std::string>{};
          },
          "Keywords ignored in lenient mode, by JSON pointer.")
      .def_prop_ro(
          "tokenizer_info", [](const Grammar& g) { return g.info; }, "The vocabulary.")
      .def_prop_ro(
          "vocab_size", [](const Grammar& g) { return g.info->vocab_size; }, "The logits width.");

  nb::class_<Matcher>(m, "Matcher",
                      "One sequence's position in a Grammar. Cheap to create and to fork; use "
                      "one from one thread at a time.")
      .def(nb::init<const Grammar&>(), nb::arg("grammar"))
      .def(
          "accept_token",
          [](Matcher& self, std::int64_t token) { self.constraint.advance(token_id(self, token)); },
          nb::arg("token"),
          "Moves on by one token. Raises NextokError (code \"invalid_argument\", param "
          "\"token\") for a token the grammar does not allow here; the state is then unchanged.")
      .def("accept_tokens", &accept_all, nb::arg("tokens"),
           "Accepts every token, or none: on a refusal the state is left as it was and "
           "NextokError names the refused position.")
      .def("validate_tokens", &validate, nb::arg("tokens"),
           "The length of the longest prefix of tokens the grammar accepts from here. The "
           "state is unchanged.")
      .def("fill_next_token_bitmask", &fill_row, nb::arg("bitmask"), nb::arg("index") = 0,
           "Writes the allowed next tokens into row `index` of an int32 bitmask of shape "
           "[B, ceil(vocab_size/32)] (or a single row [ceil(vocab_size/32)]); bit t%32 of word "
           "t//32 set = token t allowed. EOS is allowed exactly when the value is complete.")
      .def("allowed_token_ids", &allowed_ids,
           "The allowed next token ids, ascending (a debugging aid; the bitmask is faster).")
      .def(
          "accepts_bytes",
          [](const Matcher& self, nb::bytes b) {
            return self.constraint.accepts_bytes(std::string_view(b.c_str(), b.size()));
          },
          nb::arg("data"), "Whether these bytes could be read next (state unchanged).")
      .def(
          "rollback", [](Matcher& self, std::size_t n) { self.constraint.rollback(n); },
          nb::arg("num_tokens") = 1,
          "Undoes the last num_tokens accepted tokens (NextokError if fewer were accepted).")
      .def(
          "reset", [](Matcher& self) { self.constraint.reset(); }, "Back to the start.")
      .def(
          "is_terminated", [](const Matcher& self) { return self.constraint.finished(); },
          "EOS has been accepted.")
      .def(
          "is_accepting", [](const Matcher& self) { return self.constraint.is_complete(); },
          "The output so far is a complete value (EOS is allowed now).")
      .def(
          "can_continue", [](const Matcher& self) { return self.constraint.can_continue(); },
          "Some non-EOS token may still follow.")
      .def_prop_ro(
          "num_accepted", [](const Matcher& self) { return self.constraint.steps(); },
          "Tokens accepted since the start (what rollback can undo).")
      .def_prop_ro(
          "vocab_size", [](const Matcher& self) { return self.info->vocab_size; },
          "The logits width.")
      .def(
          "fork", [](const Matcher& self) { return Matcher(self); },
          "An independent copy of this state (speculation, beams, n > 1).")
      .def(
          "copy", [](const Matcher& self) { return Matcher(self); }, "Same as fork().")
      .def("__copy__", [](const Matcher& self) { return Matcher(self); })
      .def(
          "__deepcopy__", [](const Matcher& self, nb::handle) { return Matcher(self); },
          nb::arg("memo"));
}

}  // namespace nextok::py
