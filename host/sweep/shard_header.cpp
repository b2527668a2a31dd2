#include "sweep/shard_header.hpp"

#include <sstream>

#include "common/error.hpp"
#include "common/format.hpp"

namespace lumos::sweep {
namespace {

std::string shard_of(const ShardHeader& h) {
  return std::to_string(h.shard) + "/" + std::to_string(h.shards);
}

std::string sweep_of(const ShardHeader& h) {
  return "sweep " + h.sweep + " of lumos " + h.version + ", " + std::to_string(h.configurations) +
         " configurations";
}

// "a=b" with key `key`: its value, else InputError.
std::string value_of(const std::string& field, const std::string& key, const std::string& where) {
  LUMOS_EXPECT(field.size() > key.size() && field.compare(0, key.size() + 1, key + "=") == 0,
               where + ": expected '" + key + "=...', got '" + field + "'");
  return field.substr(key.size() + 1);
}

uint64_t count_of(const std::string& text, const std::string& what, const std::string& where) {
  LUMOS_EXPECT(!text.empty() && text.size() <= 15 &&
                   text.find_first_not_of("0123456789") == std::string::npos,
               where + ": " + what + " '" + text + "' is not a count");
  return std::stoull(text);
}

ShardHeader parse_header(const std::string& line, const std::string& source) {
  const std::string where = source + ":1: " + kShardHeaderTag + " line";
  std::istringstream in(line);
  std::vector<std::string> f;
  for (std::string w; in >> w;) f.push_back(w);
  LUMOS_EXPECT(f.size() == 7,
               where + ": expected 6 fields after the tag, got " + std::to_string(f.size() - 1));
  ShardHeader h;
  h.version = value_of(f[1], "version", where);
  h.sweep = value_of(f[2], "sweep", where);
  h.configurations = count_of(value_of(f[3], "configurations", where), "configurations", where);
  const std::string shard = value_of(f[4], "shard", where);
  const size_t slash = shard.find('/');
  LUMOS_EXPECT(slash != std::string::npos, where + ": shard '" + shard + "': expected i/n");
  const uint64_t i = count_of(shard.substr(0, slash), "shard", where);
  const uint64_t n = count_of(shard.substr(slash + 1), "shard count", where);
  LUMOS_EXPECT(i < n && n <= 100000, where + ": shard '" + shard + "': expected i/n, i < n");
  h.shard = static_cast<uint32_t>(i), h.shards = static_cast<uint32_t>(n);
  h.rows = count_of(value_of(f[5], "rows", where), "rows", where);
  const std::string kind = value_of(f[6], "kind", where);
  LUMOS_EXPECT(kind == "variants" || kind == "front",
               where + ": kind '" + kind + "': expected variants or front");
  h.front = kind == "front";
  return h;
}

// "1, 3 and 2 more": the first few of a long list.
std::string some_of(const std::vector<uint32_t>& v) {
  std::string s;
  for (size_t k = 0; k < v.size() && k < 5; ++k) s += (k ? ", " : "") + std::to_string(v[k]);
  if (v.size() > 5) s += " and " + std::to_string(v.size() - 5) + " more";
  return s;
}

}  // namespace

std::string sweep_fingerprint(const std::string& description) {
  uint64_t h = 14695981039346656037ull;
  for (const unsigned char c : description) h = (h ^ c) * 1099511628211ull;
  return strprintf("%016llx", static_cast<unsigned long long>(h));
}

std::string shard_header_line(const ShardHeader& h) {
  return std::string(kShardHeaderTag) + " version=" + h.version + " sweep=" + h.sweep +
         " configurations=" + std::to_string(h.configurations) + " shard=" + shard_of(h) +
         " rows=" + std::to_string(h.rows) + " kind=" + (h.front ? "front" : "variants");
}

std::optional<ShardHeader> find_shard_header(const std::vector<std::string>& comments,
                                             const std::string& source) {
  const std::string tag = kShardHeaderTag;
  for (const std::string& line : comments)
    if (line.compare(0, tag.size(), tag) == 0) return parse_header(line, source);
  return std::nullopt;
}

void check_shard_set(const std::vector<ShardInput>& inputs, bool merge) {
  const ShardInput* first = nullptr;
  const ShardInput* plain = nullptr;
  for (const ShardInput& in : inputs) {
    if (in.header && !first) first = &in;
    if (!in.header && !plain) plain = &in;
  }
  if (!first) return;  // plain CSVs: nothing says which sweep they are
  const ShardHeader& a = *first->header;
  LUMOS_EXPECT(!plain, "lumos pareto: " + plain->source + " has no " + kShardHeaderTag +
                           " line but " + first->source + " is shard " + shard_of(a) +
                           " of a sweep; give only the shards' CSVs of one sweep");
  std::vector<const ShardInput*> by_shard(a.shards, nullptr);
  for (const ShardInput& in : inputs) {
    const ShardHeader& h = *in.header;
    LUMOS_EXPECT(
        h.sweep == a.sweep && h.version == a.version && h.configurations == a.configurations,
        "lumos pareto: " + in.source + " is from another sweep than " + first->source + " (" +
            sweep_of(h) + "; " + sweep_of(a) + "); give the shards of one sweep");
    LUMOS_EXPECT(h.shards == a.shards, "lumos pareto: " + in.source + " is shard " + shard_of(h) +
                                           " but " + first->source + " is shard " + shard_of(a) +
                                           ": give the shards of one split of the sweep");
    LUMOS_EXPECT(!merge || !h.front,
                 "lumos pareto --merge: " + in.source + " is shard " + shard_of(h) +
                     "'s Pareto front (sweep --pareto), not its variants (sweep -o); --merge "
                     "joins the variants CSVs of every shard");
    LUMOS_EXPECT(in.rows == h.rows, "lumos pareto: " + in.source + " holds " +
                                        std::to_string(in.rows) + " rows but its " +
                                        kShardHeaderTag + " line counts " + std::to_string(h.rows) +
                                        " (a cut or edited file?)");
    const ShardInput*& slot = by_shard[h.shard];
    LUMOS_EXPECT(!slot, "lumos pareto: " + in.source + " and " +
                            (slot ? slot->source : std::string()) + " are both shard " +
                            shard_of(h) + " of the sweep (the same shard given twice?)");
    slot = &in;
  }
  std::vector<uint32_t> missing;
  for (uint32_t s = 0; s < a.shards; ++s)
    if (!by_shard[s]) missing.push_back(s);
  LUMOS_EXPECT(missing.empty(),
               "lumos pareto: shard" + std::string(missing.size() > 1 ? "s " : " ") +
                   some_of(missing) + " of " + std::to_string(a.shards) + " of the sweep " +
                   std::string(missing.size() > 1 ? "are" : "is") + " missing (" +
                   std::to_string(inputs.size()) + " given); give every shard's CSV");
}

}  // namespace lumos::sweep
