#include "vocab/config_json.hpp"

#include <simdjson.h>

#include <initializer_list>

#include "nextok/error.hpp"

namespace nextok::vocab {

namespace {

namespace od = simdjson::ondemand;

// Concatenation by append: GCC 12 misreports `"lit" + std::string` chains
// under -O2 (-Wrestrict).
std::string cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (auto p : parts) out.append(p);
  return out;
}

// Configs are parsed with On Demand: values we never read (such as Llama's
// model_max_length of 1e30, which no JSON number type holds) are skipped.
[[noreturn]] void bad(std::string_view name, std::string_view key, const std::string& what) {
  throw Error(ErrorCode::kMalformedFile, std::string(key.empty() ? "config" : key),
              cat({name, ": ", what}));
}

template <class T>
T check(simdjson::simdjson_result<T>&& r, std::string_view name, std::string_view key) {
  T v;
  if (auto err = std::move(r).get(v); err) {
    std::string msg;
    if (!key.empty()) msg.append("\"").append(key).append("\": ");
    msg.append(simdjson::error_message(err));
    bad(name, key, msg);
  }
  return v;
}

// A special token is a string, null, or {"content": "..."} (AddedToken form).
std::optional<std::string> token_spelling(od::value v, std::string_view key,
                                          std::string_view name) {
  const od::json_type t = check(v.type(), name, key);
  if (t == od::json_type::null) return std::nullopt;
  if (t == od::json_type::string) return std::string(check(v.get_string(), name, key));
  if (t == od::json_type::object) {
    for (auto f : check(v.get_object(), name, key)) {
      if (check(f.unescaped_key(), name, key) == "content") {
        return std::string(check(check(f.value(), name, key).get_string(), name, key));
      }
    }
  }
  bad(name, key, cat({"\"", key, "\" must be a string, null or an object with \"content\""}));
}

std::optional<uint32_t> token_id(od::value v, std::string_view key, std::string_view name) {
  if (check(v.type(), name, key) == od::json_type::null) return std::nullopt;
  int64_t x = 0;
  if (v.get_int64().get(x) || x < 0 || x > 0x7FFFFFFF) {
    bad(name, key, cat({"\"", key, "\" must be a token id"}));
  }
  return static_cast<uint32_t>(x);
}

struct Doc {
  simdjson::padded_string json;
  od::parser parser;
  od::document doc;
  od::object root;
  Doc(std::string_view text, std::string_view name) : json(text) {
    doc = check(parser.iterate(json), name, "");
    root = check(doc.get_object(), name, "");
  }
};

}  // namespace

void read_tokenizer_config(std::string_view json, std::string_view name, TokenizerConfig& cfg) {
  Doc d(json, name);
  for (auto field : d.root) {
    const std::string_view key = check(field.unescaped_key(), name, "");
    od::value value = check(field.value(), name, key);
    if (key == "bos_token") {
      cfg.roles.bos_token = token_spelling(value, key, name);
      cfg.bos_token = cfg.roles.bos_token.value_or("");
    } else if (key == "eos_token") {
      auto t = token_spelling(value, key, name);
      if (t) cfg.roles.eos_tokens.push_back(*t);
      cfg.eos_token = t.value_or("");
    } else if (key == "pad_token") {
      cfg.roles.pad_token = token_spelling(value, key, name);
    } else if (key == "unk_token") {
      cfg.roles.unk_token = token_spelling(value, key, name);
    } else if (key == "chat_template") {
      const od::json_type t = check(value.type(), name, key);
      if (t == od::json_type::string) {
        cfg.chat_template = std::string(check(value.get_string(), name, key));
      } else if (t == od::json_type::array) {
        // A list of {name, template}: the one named "default" is the chat template.
        for (auto item : check(value.get_array(), name, key)) {
          std::string tname, body;
          for (auto f : check(check(std::move(item), name, key).get_object(), name, key)) {
            const std::string_view k = check(f.unescaped_key(), name, key);
            if (k == "name") tname = check(check(f.value(), name, key).get_string(), name, key);
            if (k == "template") body = check(check(f.value(), name, key).get_string(), name, key);
          }
          if (tname == "default") cfg.chat_template = body;
        }
      } else if (t != od::json_type::null) {
        bad(name, key, "chat_template must be a string or a list");
      }
    }
  }
}

void read_model_config(std::string_view json, std::string_view name, SpecialRoles& roles) {
  Doc d(json, name);
  for (auto field : d.root) {
    const std::string_view key = check(field.unescaped_key(), name, "");
    od::value value = check(field.value(), name, key);
    if (key == "eos_token_id") {
      // The spec's rule: an int or an array, normalised to a list.
      if (check(value.type(), name, key) == od::json_type::array) {
        for (auto e : check(value.get_array(), name, key)) {
          if (auto id = token_id(check(std::move(e), name, key), key, name))
            roles.eos_ids.push_back(*id);
        }
      } else if (auto id = token_id(value, key, name)) {
        roles.eos_ids.push_back(*id);
      }
    } else if (key == "bos_token_id") {
      if (auto id = token_id(value, key, name); id && !roles.bos_id) roles.bos_id = id;
    } else if (key == "pad_token_id") {
      if (check(value.type(), name, key) == od::json_type::array) continue;
      if (auto id = token_id(value, key, name); id && !roles.pad_id) roles.pad_id = id;
    }
  }
}

}  // namespace nextok::vocab
