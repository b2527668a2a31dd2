#include "model/model_spec.hpp"
#include "model/model_toml.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>

#include "common/did_you_mean.hpp"
#include "common/error.hpp"
#include "common/file_bytes.hpp"
#include "common/format.hpp"

namespace lumos::model {
namespace {

// Lumos Table 1 (lumos.md §5.1) for GPT-3, with GPT-2's vocabulary (50257) and 2048 tokens as
// in the MLPerf GPT-3 benchmark the paper trains; Llama 3 shapes from Meta's model cards
// (128256 vocabulary, GQA with 8 KV heads, SwiGLU) at the 8192-token sequence of the
// Megatron-Bridge recipes (calibration.md §1.2).
const std::map<std::string, ModelSpec>& presets() {
  static const std::map<std::string, ModelSpec> p = [] {
    std::map<std::string, ModelSpec> m;
    auto gpt = [&](const char* n, int64_t l, int64_t h, int64_t f, int64_t a) {
      m[n] = ModelSpec{n, l, h, f, a, a, 128, 50257, 2048, Activation::kGelu};
    };
    gpt("gpt3-15b", 48, 6144, 12288, 48);
    gpt("gpt3-44b", 48, 12288, 24576, 48);
    gpt("gpt3-117b", 96, 12288, 24576, 96);
    gpt("gpt3-175b", 96, 12288, 49152, 96);
    auto llama = [&](const char* n, int64_t l, int64_t h, int64_t f, int64_t a) {
      m[n] = ModelSpec{n, l, h, f, a, 8, 128, 128256, 8192, Activation::kSwiglu};
    };
    llama("llama3-8b", 32, 4096, 14336, 32);
    llama("llama3-70b", 80, 8192, 28672, 64);
    llama("llama3-405b", 126, 16384, 53248, 128);
    return m;
  }();
  return p;
}

int64_t parse_int(const std::string& v, const std::string& where) {
  int64_t x = 0;
  const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || ptr != v.data() + v.size())
    throw InputError(where + ": expected an integer, got '" + v + "'");
  return x;
}

}  // namespace

const char* to_string(Activation a) {
  return a == Activation::kGelu ? "gelu" : "swiglu";
}

Activation parse_activation(const std::string& s) {
  if (s == "gelu") return Activation::kGelu;
  if (s == "swiglu") return Activation::kSwiglu;
  throw InputError("activation '" + s + "': expected gelu or swiglu");
}

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& [k, v] : presets()) n.push_back(k);
    return n;
  }();
  return names;
}

ModelSpec preset(const std::string& name) {
  auto it = presets().find(name);
  if (it != presets().end()) return it->second;
  std::string known;
  for (const auto& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
  throw InputError("unknown model '" + name + "'" + did_you_mean(name, preset_names()) +
                   " (presets: " + known + ")");
}

void set_field(ModelSpec* m, const std::string& key, const std::string& value,
               const std::string& where) {
  if (key == "name")
    m->name = value;
  else if (key == "layers")
    m->layers = parse_int(value, where);
  else if (key == "hidden")
    m->hidden = parse_int(value, where);
  else if (key == "ffn")
    m->ffn = parse_int(value, where);
  else if (key == "heads")
    m->heads = parse_int(value, where);
  else if (key == "kv_heads" || key == "kv-heads")
    m->kv_heads = parse_int(value, where);
  else if (key == "head_dim" || key == "head-dim")
    m->head_dim = parse_int(value, where);
  else if (key == "vocab")
    m->vocab = parse_int(value, where);
  else if (key == "seq")
    m->seq = parse_int(value, where);
  else if (key == "act") {
    try {
      m->act = parse_activation(value);
    } catch (const InputError& e) {
      throw InputError(where + ": " + e.what());
    }
  } else
    throw InputError(where + ": unknown model field '" + key +
                     "' (expected name, layers, hidden, ffn, heads, kv_heads, head_dim, vocab, "
                     "seq, act, or preset)");
}

void apply_overrides(ModelSpec* m, const std::vector<FieldOverride>& fields) {
  const bool multi_head = m->kv_heads == m->heads;
  // Megatron's kv_channels defaults to hidden / heads: a base whose head dimension is that
  // quotient keeps it so when its hidden size or heads change; a base whose head dimension is
  // set apart from it keeps its own.
  const bool head_dim_follows =
      m->heads > 0 && m->head_dim > 0 && m->head_dim * m->heads == m->hidden;
  const FieldOverride* heads = nullptr;
  bool shape = false;  // hidden or heads given
  bool kv_given = false, head_dim_given = false;
  for (const FieldOverride& f : fields) {
    set_field(m, f.key, f.value, f.where);
    if (f.key == "heads") heads = &f;
    shape = shape || f.key == "heads" || f.key == "hidden";
    kv_given = kv_given || f.key == "kv_heads" || f.key == "kv-heads";
    head_dim_given = head_dim_given || f.key == "head_dim" || f.key == "head-dim";
  }
  if (heads && !kv_given) {
    if (multi_head) {
      m->kv_heads = m->heads;
    } else if (m->kv_heads > 0 && m->heads % m->kv_heads != 0) {
      throw InputError(heads->where + ": " + std::to_string(m->heads) +
                       " heads are not a multiple of the model's " + std::to_string(m->kv_heads) +
                       " KV heads (grouped-query attention); give kv_heads too");
    }
  }
  // (Where hidden is not a multiple of the heads there is no such quotient: the head dimension
  // stays the base's, as given.)
  // A model without a head dimension (a file without a preset) takes Megatron's default too.
  if (((shape && head_dim_follows) || m->head_dim == 0) && !head_dim_given && m->heads > 0 &&
      m->hidden > 0 && m->hidden % m->heads == 0)
    m->head_dim = m->hidden / m->heads;
}

toml::table parse_toml_file(const std::string& path, const std::string& kind) {
  // Through the one input reader: a FIFO or a folder is refused, not waited on or misread.
  const common::FileBytes bytes =
      common::read_regular_file(path, 0, common::max_trace_bytes(), "a TOML " + kind + " file");
  try {
    return toml::parse(std::string_view(bytes.data.data(), bytes.size), path);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    throw InputError(path + ":" + std::to_string(where.line) + ":" + std::to_string(where.column) +
                     ": " + std::string(e.description()));
  }
}

ModelSpec load_model_toml(const std::string& path) {
  const toml::table root = parse_toml_file(path, "model");
  const toml::table* t = &root;
  if (const auto* sub = root["model"].as_table()) t = sub;
  for (const auto& [k, node] : root)
    if (t != &root && k.str() != "model")
      throw InputError(path + ": " + std::string(k.str()) + ": fields belong under [model]");
  return model_from_toml(*t, path);
}

ModelSpec model_from_toml(const toml::table& t, const std::string& path) {
  ModelSpec m;
  if (const auto* p = t.get("preset")) {
    const auto s = p->value<std::string>();
    if (!s) throw InputError(path + ": preset: expected a string");
    m = preset(*s);
  }
  std::vector<FieldOverride> fields;
  for (const auto& [k, node] : t) {
    const std::string key(k.str());
    const std::string where = path + ":" + std::to_string(node.source().begin.line) + ": " + key;
    if (key == "preset") continue;
    std::string value;
    if (const auto* i = node.as_integer())
      value = std::to_string(i->get());
    else if (const auto* s = node.as_string())
      value = s->get();
    else if (node.is_table())
      throw InputError(where +
                       ": not a table lumos reads; model fields go at the top level or "
                       "under [model]");
    else
      throw InputError(where + ": expected an integer or a string");
    fields.push_back({key, value, where});
  }
  apply_overrides(&m, fields);
  if (t.empty())
    throw InputError(path +
                     ": no model: expected `preset = \"...\"` and/or fields (layers, hidden, "
                     "ffn, heads, kv_heads, head_dim, vocab, seq, act)");
  // Without a preset nothing stands in for a field the file leaves out.
  if (!t.get("preset"))
    for (auto [v, key] : {std::pair<int64_t, const char*>{m.layers, "layers"},
                          {m.hidden, "hidden"},
                          {m.ffn, "ffn"},
                          {m.heads, "heads"},
                          {m.vocab, "vocab"},
                          {m.seq, "seq"}})
      if (v == 0 && !t.get(key))
        throw InputError(path + ": " + key +
                         ": missing (a model file without `preset = \"...\"` gives layers, "
                         "hidden, ffn, heads, vocab and seq)");
  if (m.name.empty()) m.name = "custom";
  return m;
}

void validate(const ModelSpec& m) {
  auto positive = [&](int64_t v, const char* what) {
    if (v <= 0)
      throw InputError("model " + m.name + ": " + what + " must be positive (got " +
                       std::to_string(v) + ")");
  };
  positive(m.layers, "layers");
  positive(m.hidden, "hidden");
  positive(m.ffn, "ffn");
  positive(m.heads, "heads");
  positive(m.kv_heads, "kv_heads");
  positive(m.head_dim, "head_dim");
  positive(m.vocab, "vocab");
  positive(m.seq, "seq");
  if (m.heads % m.kv_heads != 0)
    throw InputError("model " + m.name + ": heads (" + std::to_string(m.heads) +
                     ") must be a multiple of kv_heads (" + std::to_string(m.kv_heads) + ")");
  // Keeps every derived product (FLOPs ~ layers * seq^2 * hidden * batch) far inside a double's
  // exact range and every count inside int64.
  const int64_t kMax = int64_t{1} << 24;
  for (int64_t v : {m.layers, m.hidden, m.ffn, m.heads, m.head_dim, m.vocab, m.seq})
    if (v > kMax)
      throw InputError("model " + m.name + ": sizes above " + std::to_string(kMax) +
                       " are not supported (got " + std::to_string(v) + ")");
  // Parameter counts stay exact in int64 (and FLOPs well inside a double) below 10^15.
  const double h = static_cast<double>(m.hidden), f = static_cast<double>(m.ffn),
               q = static_cast<double>(m.heads * m.head_dim),
               kv = static_cast<double>(m.kv_heads * m.head_dim);
  const double params = static_cast<double>(m.layers) * (2 * h * (q + kv) + 3 * h * f) +
                        2 * static_cast<double>(m.vocab) * h + static_cast<double>(m.seq) * h;
  if (params > 1e15)
    throw InputError("model " + m.name + ": about " + strprintf("%.3g", params) +
                     " parameters; more than 10^15 is not supported");
  for (char ch : m.name)
    if (static_cast<unsigned char>(ch) < 0x20)
      throw InputError("model name: control characters are not allowed");
}

ParamCounts parameter_counts(const ModelSpec& m, int64_t padded_vocab) {
  const int64_t h = m.hidden, q = m.q_size(), kv = m.kv_size(), f = m.ffn;
  const bool gpt = m.gpt_style();
  ParamCounts c;
  const int64_t attn = h * (q + 2 * kv) + q * h + (gpt ? (q + 2 * kv) + h : 0);
  const int64_t mlp = m.act == Activation::kSwiglu ? 3 * h * f : 2 * h * f + (gpt ? f + h : 0);
  const int64_t norms = gpt ? 4 * h : 2 * h;  // two norms per layer (weight, and bias for GPT)
  c.per_layer = attn + mlp + norms;
  c.embedding = padded_vocab * h + (gpt ? m.seq * h : 0);
  c.final_norm = gpt ? 2 * h : h;
  c.output = padded_vocab * h;
  c.tied = gpt;
  return c;
}

}  // namespace lumos::model
