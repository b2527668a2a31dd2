// Temporary folders an output is written into before it is renamed into place
// (`.NAME.tmp.PID` beside NAME): removed when SIGINT or SIGTERM stops the writer, and swept by
// the next writer when a process that could not clean up (SIGKILL, a power cut) left one.
#pragma once
#include <memory>
#include <string>
#include <vector>

namespace lumos {

// While it lives, SIGINT and SIGTERM remove `files` (full paths) and then the empty `folder`,
// and the process then dies of the signal as it would have (same exit status). The handler uses
// only async-signal-safe calls (unlink, rmdir, signal, raise), so every file the writer may
// create must be listed. A signal that is ignored stays ignored. The destructor restores the
// handlers that were there.
class RemoveOnInterrupt {
 public:
  RemoveOnInterrupt(std::string folder, std::vector<std::string> files);
  ~RemoveOnInterrupt();
  RemoveOnInterrupt(const RemoveOnInterrupt&) = delete;
  RemoveOnInterrupt& operator=(const RemoveOnInterrupt&) = delete;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

// Removes the entries of `parent` named `prefix` followed by a process id (e.g. ".out.tmp.4242"
// for prefix ".out.tmp.") whose process no longer exists (kill(pid, 0) fails with ESRCH). This
// process's own and those of live processes are kept. Returns how many were removed; errors
// (an unreadable folder, an entry that cannot be removed) are ignored: the sweep is a courtesy.
size_t remove_stale_temporaries(const std::string& parent, const std::string& prefix);

}  // namespace lumos
