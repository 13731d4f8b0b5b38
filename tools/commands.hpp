#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace nextok::tools {

// Each subcommand registers itself and returns the action to run when chosen.
std::function<int()> add_explain(CLI::App& app);
std::function<int()> add_sample(CLI::App& app);
std::function<int()> add_bench(CLI::App& app);
std::function<int()> add_synth(CLI::App& app);

}  // namespace nextok::tools
