// The progress line prints nothing when standard error is not a terminal (here: the test's).
#include <gtest/gtest.h>
#include <unistd.h>

#include "common/progress.hpp"

namespace {

TEST(Progress, SilentWhenStandardErrorIsNotATerminal) {
  if (isatty(STDERR_FILENO)) GTEST_SKIP() << "standard error is a terminal";
  ::testing::internal::CaptureStderr();
  lumos::Progress progress("configurations");
  progress(1, 2);
  progress(2, 2);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
