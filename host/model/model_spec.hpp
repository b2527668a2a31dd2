// A decoder-only transformer described by its shapes: the presets of Lumos Table 1 (GPT-3) and the
// Llama 3 family, overridable from flags or a TOML file. The shapes are what Megatron's FLOP and
// memory formulas take (calibration.md §4).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace lumos::model {

enum class Activation { kGelu, kSwiglu };
const char* to_string(Activation a);
Activation parse_activation(const std::string& s);  // gelu | swiglu; throws InputError

struct ModelSpec {
  std::string name;
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t ffn = 0;  // MLP inner size (per branch for SwiGLU)
  int64_t heads = 0;
  int64_t kv_heads = 0;  // query groups (= heads without GQA)
  int64_t head_dim = 0;
  int64_t vocab = 0;  // before Megatron's padding
  int64_t seq = 0;
  Activation act = Activation::kGelu;
  // GPT-style blocks carry biases and LayerNorm (weight and bias); Llama-style have neither bias
  // nor norm bias (RMSNorm). Follows the activation: gelu -> GPT style, swiglu -> Llama style.
  bool gpt_style() const { return act == Activation::kGelu; }
  int64_t q_size() const { return heads * head_dim; }
  int64_t kv_size() const { return kv_heads * head_dim; }
};

const std::vector<std::string>& preset_names();
// Throws InputError naming the presets for an unknown name.
ModelSpec preset(const std::string& name);

// Field overrides by name (layers, hidden, ffn, heads, kv_heads, head_dim, vocab, seq, act, name);
// `where` prefixes error messages (a flag or "file.toml: key").
void set_field(ModelSpec* m, const std::string& key, const std::string& value,
               const std::string& where);

struct FieldOverride {
  std::string key, value, where;
};

// Applies overrides of a base model (a preset, or a file's fields over its preset). A multi-head
// base (kv_heads == heads) given new `heads` stays multi-head: its KV heads follow, unless
// kv_heads is overridden too. A GQA base keeps its KV heads; where they no longer divide the
// heads, the error says to give kv_heads. A base whose head_dim is hidden / heads keeps it so
// when hidden or heads change (Megatron's kv_channels default) and hidden / heads is whole, unless
// head_dim is given.
void apply_overrides(ModelSpec* m, const std::vector<FieldOverride>& fields);

// A TOML model file: optional `preset = "llama3-8b"` to start from, then any fields above
// (top level or under [model]). Unknown keys and wrong types are errors naming file and key.
ModelSpec load_model_toml(const std::string& path);

// Every size positive, heads divisible by kv_heads, and so on; throws InputError.
void validate(const ModelSpec& m);

// Parameters of one transformer layer, of the embedding (vocab x hidden, plus learned positions
// for GPT style), of the final norm and of the output layer. GPT style ties the output layer to
// the word embedding (counted once in total(), though a pipelined last stage holds a copy);
// Llama style does not.
struct ParamCounts {
  int64_t per_layer = 0;
  int64_t embedding = 0;
  int64_t final_norm = 0;
  int64_t output = 0;  // vocab x hidden, held by the last stage
  bool tied = false;
  int64_t total(int64_t layers) const {
    return per_layer * layers + embedding + final_norm + (tied ? 0 : output);
  }
};
ParamCounts parameter_counts(const ModelSpec& m, int64_t padded_vocab);

}  // namespace lumos::model
