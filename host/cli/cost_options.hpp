// The options every `lumos cost` kind shares (GPU, kernels_db, JSON, help) and the checks its
// flags need; the kinds themselves are in cmd_cost.cpp.
#pragma once
#include <cxxopts.hpp>

#include <algorithm>
#include <initializer_list>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/count_options.hpp"
#include "cli/decimal_options.hpp"
#include "cli/help_text.hpp"
#include "cli/unexpected_args.hpp"
#include "common/error.hpp"
#include "cost/kernels_db.hpp"

namespace lumos::cli {

// An option's value of type T, with a default when one is given.
template <typename T>
std::shared_ptr<cxxopts::Value> arg(const char* default_value = nullptr) {
  auto p = cxxopts::value<T>();
  return default_value ? p->default_value(default_value) : p;
}

// One kind's options, with those every kind shares; once parsed, the kernels_db they name.
struct CostOptions {
  cxxopts::Options o;
  cxxopts::ParseResult a;
  cost::KernelsDb own;
  const cost::KernelsDb* db = nullptr;

  CostOptions(const std::string& name, const std::string& about) : o(name, about) {}
  // False once --help is answered, with these examples after the options.
  bool parse(int argc, char** argv, std::initializer_list<const char*> examples) {
    // cxxopts takes one-letter names as short options: accept gemm's documented --m/--n/--k too.
    std::vector<std::string> args(argv, argv + argc);
    std::vector<char*> fixed;
    for (auto& s : args)
      fixed.push_back((s == "--m" || s == "--n" || s == "--k" ? s.erase(0, 1) : s).data());
    o.add_options()("gpu", "GPU (a100, h100, h200, b200, h800 or an alias)",
                    arg<std::string>("h100"))(
        "db", "read kernels_db from this folder instead of the embedded copy", arg<std::string>())(
        "json", "print JSON")("h,help", "show this help");
    a = parse_options(o, static_cast<int>(fixed.size()), fixed.data());
    if (has("help")) return std::cout << help_with_examples(o, examples) << '\n', false;
    refuse_unexpected_args(a, o.program());
    db = has("db") ? &(own = cost::load_db(str("db"))) : &cost::embedded_db();
    return true;
  }
  bool has(const char* key) const { return a.count(key) > 0; }
  std::string str(const char* key) const { return a[key].as<std::string>(); }
  template <typename T>
  std::optional<T> opt(const char* key) const {
    return has(key) ? std::optional<T>(a[key].as<T>()) : std::nullopt;
  }
  const cost::GpuSpec& gpu() const { return db->gpu(str("gpu")); }
  // A positive count, present or defaulted, read by common::parse_count and refused outside its
  // range (and above what T holds) rather than truncated: --ranks 4294967304 is not 8 ranks.
  template <typename T = int64_t>
  T positive(const CountOption& c) const {
    LUMOS_EXPECT(has(c.name) || a[c.name].has_default(),
                 std::string("lumos cost: missing --") + c.name);
    const int64_t cap = std::min<int64_t>(c.max, std::numeric_limits<T>::max());
    return static_cast<T>(count_of(a, {c.name, c.min, cap}, "lumos cost: "));
  }
  template <typename Json, typename Text, typename... Result>
  int render(Json json, Text text, const Result&... r) const {  // the exit code
    return (has("json") ? json(std::cout, r...) : text(std::cout, r...)), 0;
  }
};

}  // namespace lumos::cli
