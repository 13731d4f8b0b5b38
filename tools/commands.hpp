#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "nextok/chat.hpp"

namespace nextok::tools {

// Each subcommand registers itself and returns the action to run when chosen.
std::function<int()> add_explain(CLI::App& app);
std::function<int()> add_sample(CLI::App& app);
std::function<int()> add_bench(CLI::App& app);
std::function<int()> add_synth(CLI::App& app);
std::function<int()> add_tokenize(CLI::App& app);
// `bench vocab`, registered under the `bench` subcommand.
std::function<int()> add_bench_vocab(CLI::App& bench);
// A whole file; throws Error{kIo} naming it.
std::string read_file(const std::string& path);
// "a,b,,c" -> {"a", "b", "", "c"}: every field, empty ones too ("" -> {""}).
std::vector<std::string> split_commas(std::string_view text);
// The Python that runs anchors: $NEXTOK_PYTHON, the repo's .venv, or python3.
std::string default_python();
std::function<int()> add_gguf_info(CLI::App& app);
std::function<int()> add_chat(CLI::App& app);
std::function<int()> add_maskbench(CLI::App& app);
std::function<int()> add_json_generate(CLI::App& app);
std::function<int()> add_grammar_generate(CLI::App& app);
std::function<int()> add_harmony_generate(CLI::App& app);
std::function<int()> add_generate(CLI::App& app);
std::function<int()> add_serve(CLI::App& app);
// `bench decode`, registered under the `bench` subcommand.
std::function<int()> add_bench_decode(CLI::App& bench);
std::function<int()> add_bench_batch(CLI::App& bench);
// A JSON array of {role, content[, reasoning_content]} messages.
std::vector<ChatMessage> parse_messages(const std::string& text);

}  // namespace nextok::tools
