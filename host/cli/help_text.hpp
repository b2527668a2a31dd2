// What every command's --help and option parsing share: an Examples section after cxxopts' option
// list, and an unknown option refused with the nearest known one ("did you mean").
#pragma once
#include <cxxopts.hpp>

#include <initializer_list>
#include <string>

namespace lumos::cli {

// `o`'s help followed by "Examples:" and one indented line per example (a command line, then,
// after two spaces and '#', what it does).
std::string help_with_examples(const cxxopts::Options& o,
                               std::initializer_list<const char*> examples);

// The same section alone, for commands whose usage is not a cxxopts help (lumos, lumos cost).
std::string examples_section(std::initializer_list<const char*> examples);

// Parses argv with `o`. An option `o` does not know is refused as InputError naming it and, when
// one is near (common/did_you_mean.hpp), the option that was likely meant.
cxxopts::ParseResult parse_options(cxxopts::Options& o, int argc, char** argv);

}  // namespace lumos::cli
