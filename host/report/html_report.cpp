// The page of `lumos report`: each input's data inline as a JSON script element, the script that
// draws it and the style inline, so the file opens anywhere with no network (docs/design.md,
// "Reports").
#include "report/html_report.hpp"

#include <string>

namespace lumos::report {

namespace {

std::string html_escaped(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// JSON inside a script element: "</" could close the element, so it becomes "<\/", which JSON
// reads as the same string (a '/' may be escaped; "</" occurs only inside strings).
std::string script_safe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (size_t i = 0; i < json.size(); ++i) {
    out += json[i];
    if (json[i] == '<' && i + 1 < json.size() && (json[i + 1] == '/' || json[i + 1] == '!'))
      out += "\\";
  }
  return out;
}

}  // namespace

void html_report(std::ostream& os, const std::string& title,
                 const std::vector<HtmlSection>& sections) {
  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
     << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
     << "<title>" << html_escaped(title) << "</title>\n<style>\n"
     << kHtmlReportStyle << "</style>\n</head>\n<body>\n<header><h1>" << html_escaped(title)
     << "</h1><p class=\"inputs\">from";
  for (const HtmlSection& s : sections)
    os << " <code>" << html_escaped(s.source) << "</code> (" << s.kind << ")";
  os << "</p></header>\n<main id=\"lumos-report\"></main>\n";
  for (const HtmlSection& s : sections)
    os << "<script type=\"application/json\" class=\"lumos-data\" data-kind=\"" << s.kind
       << "\" data-source=\"" << html_escaped(s.source) << "\">" << script_safe(s.json)
       << "</script>\n";
  os << "<script>\n" << kHtmlReportScript << "</script>\n</body>\n</html>\n";
}

}  // namespace lumos::report
