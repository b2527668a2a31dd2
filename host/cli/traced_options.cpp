#include "cli/traced_options.hpp"

#include <vector>

namespace lumos::cli {

void traced_options(cxxopts::Options& o, const std::string& group) {
  o.add_options(group)(
      "traced",
      "what the traced job ran, over what the trace shows: tp=8,pp=1,dp=1,cp=1,mbs=4 (also gbs, "
      "interleave, layers)",
      cxxopts::value<std::string>())(
      "group",
      "a process group's role, over what the trace shows: NAME_OR_INDEX=tp|dp|pp|cp|ep|embedding "
      "(repeatable; names and positions as --describe lists them)",
      cxxopts::value<std::vector<std::string>>());
}

whatif::JobHints hints_from(const cxxopts::ParseResult& a, const std::string& cmd) {
  whatif::JobHints h;
  if (a.count("traced"))
    h.traced = whatif::parse_traced_degrees(a["traced"].as<std::string>(), cmd + ": --traced");
  if (a.count("group"))
    for (const auto& g : a["group"].as<std::vector<std::string>>())
      h.groups.push_back(whatif::parse_group_override(g, cmd + ": --group"));
  return h;
}

void warn_overridden(std::ostream& os, const whatif::JobStructure& js, const std::string& cmd) {
  for (const auto& line : js.overridden) os << cmd << ": warning: given " << line << '\n';
}

}  // namespace lumos::cli
