// `nextok tokenize`, `nextok detokenize` and `nextok vocab`: text ↔ ids and
// the vocabulary table, from a directory with tokenizer.json.
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.hpp"
#include "nextok/error.hpp"
#include "nextok/tokenizer.hpp"

namespace nextok::tools {
namespace {

struct TokenizeArgs {
  std::string tokenizer;
  std::string text;
  std::string input_jsonl;
  bool json = false;
  bool no_special = false;
};

void print_ids(const std::vector<uint32_t>& ids, bool json) {
  if (json) {
    std::printf("%s\n", nlohmann::json{{"ids", ids}}.dump().c_str());
    return;
  }
  std::string line;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) line.push_back(' ');
    line += std::to_string(ids[i]);
  }
  std::printf("%s\n", line.c_str());
}

int run_tokenize(const TokenizeArgs& a) {
  const Tokenizer tok = Tokenizer::from_path(a.tokenizer);
  EncodeOptions opt;
  opt.parse_special = !a.no_special;
  if (a.input_jsonl.empty()) {
    print_ids(tok.encode(a.text, opt), a.json);
    return 0;
  }
  std::ifstream in(a.input_jsonl, std::ios::binary);
  if (!in) throw Error(ErrorCode::kIo, "input-jsonl", a.input_jsonl + ": cannot open");
  std::string line;
  size_t lineno = 0;
  std::vector<uint32_t> ids;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_string()) {
      throw Error(ErrorCode::kMalformedFile, "input-jsonl",
                  a.input_jsonl + ":" + std::to_string(lineno) + ": expected one JSON string");
    }
    ids.clear();
    tok.encode_into(j.get_ref<const std::string&>(), ids, opt);
    print_ids(ids, a.json);
  }
  return 0;
}

struct DetokenizeArgs {
  std::string tokenizer;
  std::vector<uint32_t> ids;
  bool hex = false;
  bool skip_special = false;
};

std::string to_hex(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

int run_detokenize(const DetokenizeArgs& a) {
  const std::string out =
      Tokenizer::from_path(a.tokenizer).decode(a.ids, {.skip_special = a.skip_special});
  if (a.hex) {
    std::printf("%s\n", to_hex(out).c_str());
  } else {
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  return 0;
}

struct VocabArgs {
  std::string tokenizer;
  bool dump = false;
};

int run_vocab(const VocabArgs& a) {
  const std::shared_ptr<const Vocabulary> v = load_vocabulary(a.tokenizer);
  if (a.dump) {
    std::string line;
    for (uint32_t id = 0; id < v->size(); ++id) {
      line = "{\"id\":" + std::to_string(id) + ",\"kind\":\"" + token_kind_name(v->kind(id)) +
             "\",\"hex\":\"" + to_hex(v->bytes(id)) + "\"}\n";
      std::fwrite(line.data(), 1, line.size(), stdout);
    }
    return 0;
  }
  size_t counts[5] = {};
  for (uint32_t id = 0; id < v->size(); ++id) ++counts[static_cast<int>(v->kind(id))];
  nlohmann::json j = {{"size", v->size()},
                      {"eos_ids", std::vector<uint32_t>(v->eos_ids().begin(), v->eos_ids().end())},
                      {"bos_id", v->bos_id() ? nlohmann::json(*v->bos_id()) : nlohmann::json()},
                      {"pad_id", v->pad_id() ? nlohmann::json(*v->pad_id()) : nlohmann::json()},
                      {"kinds",
                       {{"normal", counts[0]},
                        {"byte", counts[1]},
                        {"added", counts[2]},
                        {"special", counts[3]},
                        {"absent", counts[4]}}}};
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

}  // namespace

std::function<int()> add_tokenize(CLI::App& app) {
  auto t = std::make_shared<TokenizeArgs>();
  CLI::App* tok = app.add_subcommand("tokenize", "Text to token ids (equal to HF tokenizers)");
  tok->add_option("--tokenizer", t->tokenizer, "Directory with tokenizer.json, or a .gguf file")
      ->required();
  tok->add_option("text", t->text, "The text to encode");
  tok->add_option("--input-jsonl", t->input_jsonl, "One JSON string per line");
  tok->add_flag("--json", t->json, "Print {\"ids\": [...]} per line");
  tok->add_flag("--no-special", t->no_special, "Encode special-token markers as plain text");

  auto d = std::make_shared<DetokenizeArgs>();
  CLI::App* det = app.add_subcommand("detokenize", "Token ids to text (raw bytes)");
  det->add_option("--tokenizer", d->tokenizer, "Directory with tokenizer.json, or a .gguf file")
      ->required();
  det->add_option("ids", d->ids, "Token ids")->required();
  det->add_flag("--hex", d->hex, "Print the bytes as hex");
  det->add_flag("--skip-special", d->skip_special, "Drop special tokens");

  auto v = std::make_shared<VocabArgs>();
  CLI::App* voc = app.add_subcommand("vocab", "Vocabulary summary, or every id with --dump");
  voc->add_option("--tokenizer", v->tokenizer, "Directory with tokenizer.json, or a .gguf file")
      ->required();
  voc->add_flag("--dump", v->dump, "One JSON line per id: id, kind, hex bytes");

  return [=]() {
    if (tok->parsed()) return run_tokenize(*t);
    if (det->parsed()) return run_detokenize(*d);
    if (voc->parsed()) return run_vocab(*v);
    return -1;
  };
}

}  // namespace nextok::tools
