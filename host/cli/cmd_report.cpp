// lumos report: one self-contained HTML page from a sweep's variants CSV and the --json reports
// of replay, estimate and carbon (report/html_report.hpp).
#include <cxxopts.hpp>

#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/unexpected_args.hpp"
#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/path_identity.hpp"
#include "report/html_report.hpp"

namespace lumos::cli {

int cmd_report(int argc, char** argv) {
  cxxopts::Options o(
      "lumos report",
      "One self-contained HTML page (no network needed to open it) from a sweep's variants CSV "
      "(an interactive Pareto front: hover shows the configuration, GPU types filter it; the TP x "
      "PP heat map; the carbon account) and the --json output of lumos replay (steps, breakdown, "
      "per-rank bars, critical path), estimate (breakdown, per-stage bars) or carbon (the carbon "
      "account). Each input is one part of the page, in the order given.");
  o.add_options()("o,output", "the HTML file to write", cxxopts::value<std::string>())(
      "title", "the page's heading", cxxopts::value<std::string>()->default_value("lumos report"))(
      "inputs", "variants CSVs (.csv) and --json reports",
      cxxopts::value<std::vector<std::string>>())("h,help", "show this help");
  o.parse_positional({"inputs"});
  o.positional_help("IN.csv|IN.json [...] -o OUT.html");
  const auto a = o.parse(argc, argv);
  if (a.count("help")) {
    std::cout
        << o.help()
        << "\nExamples:\n"
           "  lumos sweep --model gpt3-175b --gpus 256..1024 --gpu h100,b200 -o variants.csv\n"
           "  lumos estimate --model gpt3-175b --tp 8 --pp 8 --dp 16 --gbs 1536 --json > e.json\n"
           "  lumos report variants.csv e.json -o report.html --title 'GPT-3 175B'\n";
    return 0;
  }
  refuse_unexpected_args(a, "lumos report");
  LUMOS_EXPECT(
      a.count("inputs"),
      "lumos report: give a variants CSV or a --json report of replay, estimate or carbon");
  LUMOS_EXPECT(a.count("output"), "lumos report: -o OUT.html is required");
  const std::string out = a["output"].as<std::string>();
  LUMOS_EXPECT(!is_stdout(out), "lumos report: -o must name a file (the page is one HTML file)");
  const auto paths = a["inputs"].as<std::vector<std::string>>();
  std::vector<common::RolePath> inputs;
  for (const std::string& path : paths) inputs.push_back({path, "an input"});
  common::check_outputs_distinct("lumos report", inputs, {{out, "-o"}});
  check_output_path(out);
  std::vector<report::HtmlSection> sections;
  for (const std::string& path : paths) sections.push_back(report::read_report_input(path));
  write_file_atomically(out, [&](std::ostream& os) {
    report::html_report(os, a["title"].as<std::string>(), sections);
  });
  std::cout << "wrote " << out << " (" << sections.size() << " part"
            << (sections.size() == 1 ? "" : "s") << ")\n";
  return 0;
}

}  // namespace lumos::cli
