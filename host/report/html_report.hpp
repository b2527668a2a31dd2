// `lumos report`: one self-contained HTML page (data, script and style inline; nothing fetched)
// from a sweep's variants CSV and the --json reports of replay, estimate and carbon
// (docs/design.md, "Reports").
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace lumos::report {

// One input of the page: what it is, where it came from and its data as a JSON text.
struct HtmlSection {
  std::string kind;    // "sweep", "estimate", "replay" or "carbon"
  std::string source;  // the input's path, as given
  std::string json;    // a sweep: an array of row objects; otherwise the report as read
};

// Reads a variants CSV (`lumos sweep -o`, `lumos estimate --search --csv`) or the --json output
// of `lumos replay`, `lumos estimate` or `lumos carbon`. Throws InputError naming the file and
// what was expected for anything else (an empty table, invalid JSON, another report).
HtmlSection read_report_input(const std::string& path);

// The page: `title` as its heading, one part per section in the order given.
void html_report(std::ostream& os, const std::string& title,
                 const std::vector<HtmlSection>& sections);

// The page's script and style (html_report_assets.cpp), kept apart from the page's assembly.
extern const char* const kHtmlReportStyle;
extern const char* const kHtmlReportScript;

}  // namespace lumos::report
