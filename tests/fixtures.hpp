// Tests that need files from ../shared (tokenizers, datasets) skip when they
// are missing locally, but fail when NEXTOK_REQUIRE_FIXTURES is set: the test
// command (scripts/test.sh, hence CI) sets it, so a missing fixture there is
// a failure, never a silent pass.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>

namespace nextok::test {

inline bool fixtures_required() {
  const char* v = std::getenv("NEXTOK_REQUIRE_FIXTURES");
  return v != nullptr && *v != '\0' && *v != '0';
}

}  // namespace nextok::test

#define NEXTOK_REQUIRE_FIXTURE(present, what)                                         \
  do {                                                                                \
    if (!(present)) {                                                                 \
      if (::nextok::test::fixtures_required()) FAIL() << "missing fixture: " << what; \
      GTEST_SKIP() << "missing fixture: " << what;                                    \
    }                                                                                 \
  } while (0)
