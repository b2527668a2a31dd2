#include "common/temp_folder.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <system_error>

namespace lumos {

struct RemoveOnInterrupt::State {
  std::string folder;
  std::vector<std::string> files;
  struct sigaction old_int {
  }, old_term{};
};

namespace {

// The folder the handler removes; null when none is armed. Written only outside the handler.
std::atomic<const RemoveOnInterrupt::State*> g_armed{nullptr};

extern "C" void remove_and_reraise(int sig) {
  if (const RemoveOnInterrupt::State* s = g_armed.exchange(nullptr)) {
    for (const std::string& f : s->files) ::unlink(f.c_str());
    ::rmdir(s->folder.c_str());
  }
  // Blocked while this handler runs, the signal is delivered on return, by the default action.
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

RemoveOnInterrupt::RemoveOnInterrupt(std::string folder, std::vector<std::string> files)
    : state_(std::make_unique<State>()) {
  state_->folder = std::move(folder);
  state_->files = std::move(files);
  g_armed.store(state_.get());
  struct sigaction sa {};
  sa.sa_handler = remove_and_reraise;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGINT);
  sigaddset(&sa.sa_mask, SIGTERM);
  // A signal the process was started ignoring (`nohup`, a background job's SIGINT) stays ignored.
  ::sigaction(SIGINT, nullptr, &state_->old_int);
  ::sigaction(SIGTERM, nullptr, &state_->old_term);
  if (state_->old_int.sa_handler != SIG_IGN) ::sigaction(SIGINT, &sa, nullptr);
  if (state_->old_term.sa_handler != SIG_IGN) ::sigaction(SIGTERM, &sa, nullptr);
}

RemoveOnInterrupt::~RemoveOnInterrupt() {
  ::sigaction(SIGINT, &state_->old_int, nullptr);
  ::sigaction(SIGTERM, &state_->old_term, nullptr);
  g_armed.store(nullptr);
}

size_t remove_stale_temporaries(const std::string& parent, const std::string& prefix) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> stale;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string digits = name.substr(prefix.size());
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(digits));
    if (pid <= 0 || pid == ::getpid()) continue;
    // EPERM means the process exists (another user's): only a process that is gone is swept.
    if (::kill(pid, 0) == -1 && errno == ESRCH) stale.push_back(it->path());
  }
  size_t removed = 0;
  for (const fs::path& p : stale)
    if (fs::remove_all(p, ec) > 0 && !ec) ++removed;
  return removed;
}

}  // namespace lumos
