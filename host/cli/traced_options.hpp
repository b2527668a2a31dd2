// The options that say what a traced job is, over what its trace shows (`lumos whatif`, `lumos
// sweep --trace`): --traced degrees and --group roles (whatif/job_structure.hpp JobHints).
#pragma once
#include <cxxopts.hpp>

#include <ostream>
#include <string>

#include "whatif/job_structure.hpp"

namespace lumos::cli {

void traced_options(cxxopts::Options& o, const std::string& group = "");

// InputError naming `cmd` for a bad --traced item or --group role.
whatif::JobHints hints_from(const cxxopts::ParseResult& a, const std::string& cmd);

// One warning line per degree or role the user gave over the trace's evidence.
void warn_overridden(std::ostream& os, const whatif::JobStructure& js, const std::string& cmd);

}  // namespace lumos::cli
