// `lumos sweep`'s options from their text, given on the command line or in a sweep file's
// [sweep] table (sweep_file.hpp): the axes of the spec, the tokens to train and how the sweep is
// split. Errors name the option (e.g. "--tp").
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sweep/sweep_run.hpp"
#include "sweep/sweep_spec.hpp"

namespace lumos::sweep {

// What a sweep file's [sweep] table may set: the options that describe the sweep.
const std::vector<std::string>& sweep_file_options();

struct OptionText {
  std::function<bool(const char*)> given;        // on the command line or in the sweep file
  std::function<std::string(const char*)> text;  // the given text, else the option's default
  // How errors name the option where its text came from: "--tp", or "FILE: [sweep] tp" for a
  // sweep file's. Unset: always the flag.
  std::function<std::string(const char*)> name;
};

// Every axis of `spec` from its option: the layout, software, hardware and site axes (not the
// model, the tokens or a trace). Without --gpus and --dp, the GPU counts are 256..1024. Throws
// InputError, naming the option by `o.name`, for an axis that does not parse, or --gpus and --dp
// both given.
void parse_axes(const OptionText& o, SweepSpec* spec);

// Tokens to train as a sweep file writes them; `file` names it in the error.
double parse_tokens(const std::string& text, const std::string& file);

// --shard i/n: (i, n) with 0 <= i < n <= 100000.
std::pair<uint32_t, uint32_t> parse_shard(const std::string& text);

// How the sweep runs: --shard (none: the whole sweep), --threads, --memory (bytes with their
// unit, at least 64MiB) and --fold (on or off).
SweepOptions parse_run_options(const std::optional<std::string>& shard, int threads,
                               const std::string& memory, const std::string& fold);

}  // namespace lumos::sweep
