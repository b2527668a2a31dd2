#include "whatif/speed_axes.hpp"

#include <cmath>
#include <cstdlib>
#include <sstream>

#include "common/error.hpp"

namespace lumos::whatif {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);) out.push_back(item);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

graph::NodeClass class_named(const std::string& name, const std::string& option) {
  for (int k = 1; k < replay::kNumNodeClasses; ++k)
    if (name == graph::to_string(static_cast<graph::NodeClass>(k)))
      return static_cast<graph::NodeClass>(k);
  throw InputError(option + ": unknown class '" + name +
                   "' (expected cpu, compute, comm or memory)");
}

float factor_of(const std::string& text, const std::string& cls, const std::string& option) {
  char* end = nullptr;
  const double x = std::strtod(text.c_str(), &end);
  LUMOS_EXPECT(!text.empty() && end && *end == '\0',
               option + ": the factor of '" + cls + "' is not a number: '" + text + "'");
  LUMOS_EXPECT(std::isfinite(x) && x >= kMinSpeedFactor && x <= kMaxSpeedFactor,
               option + ": the factor of '" + cls + "' (" + text +
                   ") is out of range: expected a speed-up between 1e-6 and 1e6");
  return static_cast<float>(x);
}

}  // namespace

std::vector<SpeedAxis> parse_speed_axes(const std::string& spec, const std::string& option) {
  std::vector<SpeedAxis> axes;
  for (const std::string& text : split(spec, ';')) {
    const size_t eq = text.find('=');
    LUMOS_EXPECT(eq != std::string::npos,
                 option + ": expected class=f1,f2,... per axis, got '" + text + "'");
    SpeedAxis axis;
    axis.name = text.substr(0, eq);
    axis.cls = class_named(axis.name, option);
    for (const std::string& f : split(text.substr(eq + 1), ','))
      axis.factors.push_back(factor_of(f, axis.name, option));
    LUMOS_EXPECT(!axis.factors.empty(), option + ": axis '" + text + "' has no factors");
    axes.push_back(std::move(axis));
  }
  LUMOS_EXPECT(!axes.empty(), option + ": no axis given (expected class=f1,f2,...)");
  return axes;
}

replay::VariantBatch parse_speed_variant(const std::string& spec, const std::string& option) {
  replay::VariantBatch variant = replay::VariantBatch::identity(1);
  for (const std::string& item : split(spec, ',')) {
    const size_t eq = item.find('=');
    LUMOS_EXPECT(eq != std::string::npos, option + ": expected class=factor, got '" + item + "'");
    const std::string cls = item.substr(0, eq);
    const graph::NodeClass c = class_named(cls, option);
    variant.speed[static_cast<int>(c)][0] = factor_of(item.substr(eq + 1), cls, option);
  }
  return variant;
}

}  // namespace lumos::whatif
