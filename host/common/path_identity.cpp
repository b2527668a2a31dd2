#include "common/path_identity.hpp"

#include <sys/stat.h>

#include <filesystem>

#include "common/error.hpp"

namespace lumos::common {
namespace {

namespace fs = std::filesystem;

struct Identity {
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  std::string normal;  // absolute, links of the existing part resolved, "." and ".." removed
};

Identity identify(const std::string& path) {
  Identity id;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    id.exists = true;
    id.dev = st.st_dev;
    id.ino = st.st_ino;
  }
  std::error_code ec;
  const fs::path abs = fs::absolute(path, ec);
  const fs::path canonical = fs::weakly_canonical(abs, ec);
  id.normal = (ec ? abs.lexically_normal() : canonical).string();
  return id;
}

bool same(const Identity& a, const Identity& b) {
  if (a.exists && b.exists) return a.dev == b.dev && a.ino == b.ino;
  return !a.exists && !b.exists && a.normal == b.normal;
}

// What a folder of traces or a kernels_db folder is read from: *.json and *.json.gz files.
bool json_name(const std::string& name) {
  return name.ends_with(".json") || name.ends_with(".json.gz");
}

bool skipped(const std::string& path) {
  return path.empty() || path == "-";
}

struct Named {
  Identity id;
  std::string description;  // "the input trace t.json", "r0.json in the input folder t"
};

// The inputs, with the files directly inside each input folder (a folder of rank traces, a
// kernels_db folder): an output there would replace what the run reads.
std::vector<Named> expand_inputs(const std::vector<RolePath>& inputs) {
  std::vector<Named> out;
  for (const RolePath& in : inputs) {
    if (skipped(in.path)) continue;
    out.push_back({identify(in.path), in.role + " " + in.path});
    std::error_code ec;
    if (!fs::is_directory(in.path, ec)) continue;
    for (fs::directory_iterator it(in.path, ec), end; !ec && it != end; it.increment(ec))
      out.push_back(
          {identify(it->path().string()), it->path().string() + " in " + in.role + " " + in.path});
  }
  return out;
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  return same(identify(a), identify(b));
}

void check_outputs_distinct(const std::string& who, const std::vector<RolePath>& inputs,
                            const std::vector<RolePath>& outputs) {
  const std::vector<Named> ins = expand_inputs(inputs);
  // Input folders of JSON files (rank traces, a kernels_db): a new JSON file there would be read
  // as one more rank, or one more table, by the next run over the folder.
  std::vector<Named> folders;
  for (const RolePath& in : inputs) {
    std::error_code ec;
    if (skipped(in.path) || !fs::is_directory(in.path, ec)) continue;
    bool json = false;
    for (fs::directory_iterator it(in.path, ec), end; !ec && it != end && !json; it.increment(ec))
      json = json_name(it->path().filename().string());
    if (json) folders.push_back({identify(in.path), in.role + " " + in.path});
  }
  std::vector<Named> outs_so_far;
  for (const RolePath& out : outputs) {
    if (skipped(out.path)) continue;
    const Identity id = identify(out.path);
    const std::string head = who + ": output " + out.path + " (" + out.role + ") is ";
    const std::string tail = "; choose another path";
    for (const Named& in : ins) LUMOS_EXPECT(!same(id, in.id), head + in.description + tail);
    // Only a JSON file there is read back (a CSV, a graph file or a subfolder is not).
    std::string path = out.path;
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    if (json_name(fs::path(path).filename().string())) {
      fs::path parent = fs::path(path).parent_path();
      if (parent.empty()) parent = ".";
      const Identity where = identify(parent.string());
      for (const Named& folder : folders)
        LUMOS_EXPECT(!same(where, folder.id), head + "inside " + folder.description + tail);
    }
    for (const Named& other : outs_so_far)
      LUMOS_EXPECT(!same(id, other.id), head + "also " + other.description + tail);
    outs_so_far.push_back({id, "the output " + out.path + " (" + out.role + ")"});
  }
}

}  // namespace lumos::common
