#include "cudoctor/runtime/child.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>

namespace cudoctor::runtime {

TEST(Child, DeliversThePayload) {
  const auto r = run_in_child([] { return std::string("{\"x\":1}"); }, std::chrono::seconds(5));
  EXPECT_EQ(r.outcome.status, "ok");
  EXPECT_EQ(r.payload, "{\"x\":1}");
}

TEST(Child, LargePayloadArrivesWhole) {
  const auto r = run_in_child([] { return std::string(5 << 20, 'a'); }, std::chrono::seconds(20));
  EXPECT_EQ(r.outcome.status, "ok");
  EXPECT_EQ(r.payload.size(), 5u << 20);
}

TEST(Child, CrashBecomesAnOutcome) {
  const auto r = run_in_child(
      []() -> std::string {
        ::raise(SIGSEGV);
        return "";
      },
      std::chrono::seconds(5));
  EXPECT_EQ(r.outcome.status, "crashed");
  EXPECT_EQ(r.outcome.signal, SIGSEGV);
}

TEST(Child, HangIsKilledAtTheDeadline) {
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_in_child(
      []() -> std::string {
        for (;;) ::pause();
      },
      std::chrono::milliseconds(300));
  EXPECT_EQ(r.outcome.status, "timeout");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

TEST(Child, ExitBeforeReportingIsNotSuccess) {
  const auto r = run_in_child(
      []() -> std::string {
        std::exit(3);
      },
      std::chrono::seconds(5));
  EXPECT_EQ(r.outcome.status, "exited");
  EXPECT_EQ(r.outcome.exit_code, 3);
}

TEST(Child, ChattyLibraryDoesNotReachOurStdout) {
  testing::internal::CaptureStdout();
  const auto r = run_in_child(
      [] {
        ::write(1, "noise\n", 6);
        return std::string("ok");
      },
      std::chrono::seconds(5));
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "");
  EXPECT_EQ(r.payload, "ok");
}

}  // namespace cudoctor::runtime
