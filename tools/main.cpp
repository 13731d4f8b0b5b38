// The nextok command-line tool.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <vector>

#include "commands.hpp"
#include "nextok/error.hpp"
#include "nextok/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"nextok: from logits to the next token id, exactly"};
  app.set_version_flag("--version", nextok::kVersion);
  app.require_subcommand(1);
  std::vector<std::function<int()>> actions = {
      nextok::tools::add_explain(app),       nextok::tools::add_sample(app),
      nextok::tools::add_bench(app),         nextok::tools::add_synth(app),
      nextok::tools::add_tokenize(app),      nextok::tools::add_gguf_info(app),
      nextok::tools::add_chat(app),          nextok::tools::add_maskbench(app),
      nextok::tools::add_json_generate(app), nextok::tools::add_generate(app),
      nextok::tools::add_serve(app),         nextok::tools::add_grammar_generate(app),
      nextok::tools::add_harmony_generate(app)};
  try {
    app.parse(argc, argv);
    for (auto& act : actions) {
      const int rc = act();
      if (rc >= 0) return rc;
    }
    return 0;
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const nextok::Error& e) {
    std::fprintf(stderr, "nextok: error [%s]: %s\n", nextok::error_code_name(e.code()), e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nextok: error: %s\n", e.what());
    return 2;
  }
}
