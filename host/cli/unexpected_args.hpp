// Arguments a command did not take are errors: a file given without its option (`lumos sweep
// my.toml` for `--spec my.toml`) or a second input would otherwise be ignored without a word.
#pragma once
#include <cxxopts.hpp>

#include <string>
#include <vector>

#include "common/error.hpp"

namespace lumos::cli {

// Throws InputError naming every argument in `extra` ("lumos replay: unexpected arguments 'b.json',
// 'c.json'"), with `hint` after it when one is given.
inline void refuse_unexpected_args(const std::vector<std::string>& extra,
                                   const std::string& command, const std::string& hint = "") {
  if (extra.empty()) return;
  std::string names;
  for (const std::string& s : extra) names += (names.empty() ? "'" : ", '") + s + "'";
  throw InputError(command + ": unexpected argument" + (extra.size() > 1 ? "s " : " ") + names +
                   (hint.empty() ? "" : " (" + hint + ")"));
}

inline void refuse_unexpected_args(const cxxopts::ParseResult& a, const std::string& command,
                                   const std::string& hint = "") {
  refuse_unexpected_args(a.unmatched(), command, hint);
}

}  // namespace lumos::cli
