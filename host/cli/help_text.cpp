#include "cli/help_text.hpp"

#include <string_view>
#include <vector>

#include "common/did_you_mean.hpp"
#include "common/error.hpp"

namespace lumos::cli {

std::string examples_section(std::initializer_list<const char*> examples) {
  std::string s = "Examples:\n";
  for (const char* e : examples) s += std::string("  ") + e + '\n';
  return s;
}

std::string help_with_examples(const cxxopts::Options& o,
                               std::initializer_list<const char*> examples) {
  return o.help() + '\n' + examples_section(examples);
}

namespace {

std::vector<std::string> long_names(const cxxopts::Options& o) {
  std::vector<std::string> names;
  for (const std::string& g : o.groups())
    for (const cxxopts::HelpOptionDetails& d : o.group_help(g).options)
      for (const std::string& l : d.l) names.push_back("--" + l);
  return names;
}

}  // namespace

cxxopts::ParseResult parse_options(cxxopts::Options& o, int argc, char** argv) {
  try {
    return o.parse(argc, argv);
  } catch (const cxxopts::exceptions::no_such_option&) {
    // cxxopts names the option only inside its message: find it in argv, where it is whole.
    const std::vector<std::string> known = long_names(o);
    for (int i = 1; i < argc; ++i) {
      const std::string_view arg = argv[i];
      if (arg == "--") break;
      if (arg.size() < 3 || arg.substr(0, 2) != "--") continue;
      const std::string name(arg.substr(0, arg.find('=')));
      bool is_known = false;
      for (const std::string& k : known) is_known = is_known || k == name;
      if (!is_known)
        throw InputError(o.program() + ": unknown option '" + name + "'" +
                         did_you_mean(name, known) + " (see " + o.program() + " --help)");
    }
    throw;
  }
}

}  // namespace lumos::cli
