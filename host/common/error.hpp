// One error mechanism for the whole host library: typed exceptions, caught only in main().
// InputError = the user's input is wrong (exit 1); anything else is an internal error (exit 2).
#pragma once
#include <stdexcept>
#include <string>

namespace lumos {

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace lumos

// Throws InputError with the streamed message when cond is false.
#define LUMOS_EXPECT(cond, msg)                  \
  do {                                           \
    if (!(cond)) throw ::lumos::InputError(msg); \
  } while (0)
