#include "cudoctor/runtime/child.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace cudoctor::runtime {

TEST(Child, DeliversThePayload) {
  const auto r = run_in_child([] { return std::string("{\"x\":1}"); }, std::chrono::seconds(5));
  EXPECT_EQ(r.outcome.status, snapshot::ChildStatus::ok);
  EXPECT_EQ(r.payload, "{\"x\":1}");
}

TEST(Child, LargePayloadArrivesWhole) {
  const auto r = run_in_child([] { return std::string(5 << 20, 'a'); }, std::chrono::seconds(20));
  EXPECT_EQ(r.outcome.status, snapshot::ChildStatus::ok);
  EXPECT_EQ(r.payload.size(), 5u << 20);
}

TEST(Child, CrashBecomesAnOutcome) {
  const auto r = run_in_child(
      []() -> std::string {
        ::raise(SIGSEGV);
        return "";
      },
      std::chrono::seconds(5));
  EXPECT_EQ(r.outcome.status, snapshot::ChildStatus::crashed);
  EXPECT_EQ(r.outcome.signal, SIGSEGV);
}

TEST(Child, HangIsKilledAtTheDeadline) {
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_in_child(
      []() -> std::string {
        for (;;) ::pause();
      },
      std::chrono::milliseconds(300));
  EXPECT_EQ(r.outcome.status, snapshot::ChildStatus::timeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

TEST(Child, ExitBeforeReportingIsNotSuccess) {
  const auto r = run_in_child([]() -> std::string { std::exit(3); }, std::chrono::seconds(5));
  EXPECT_EQ(r.outcome.status, snapshot::ChildStatus::exited);
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

TEST(Child, ALibraryThatClosesItsDescriptorsAndBlocksEndsAtTheDeadline) {
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_in_child(
      []() -> std::string {
        for (int fd = 3; fd < 1024; ++fd) ::close(fd);
        for (;;) ::pause();
      },
      std::chrono::milliseconds(300));
  EXPECT_EQ(r.outcome.status, snapshot::ChildStatus::timeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(Child, AHelperHoldingThePipeDoesNotTurnAReplyIntoAHang) {
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_in_child(
      [] {
        if (::fork() == 0) {
          ::setsid();
          for (;;) ::pause();
        }
        return std::string("{\"x\":2}");
      },
      std::chrono::seconds(5));
  EXPECT_EQ(r.outcome.status, snapshot::ChildStatus::ok);
  EXPECT_EQ(r.payload, "{\"x\":2}");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(Child, BytesBesideTheReplyMakeItABadReply) {
  const auto r = run_in_child(
      [] {
        ::write(3, "7\nspoofed", 9);  // the reply pipe is descriptor 3 or above
        for (int fd = 3; fd < 16; ++fd) ::write(fd, "garbage", 7);
        return std::string("{}");
      },
      std::chrono::seconds(5));
  EXPECT_EQ(r.outcome.status, snapshot::ChildStatus::bad_reply) << r.outcome.message;
}

TEST(Child, TheChildCannotRunAProgramNorSignalItsParent) {
  const auto r = run_in_child(
      [] {
        char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
        ::execv("/bin/true", argv);
        const int exec_errno = errno;
        const int kill_rc = ::kill(::getppid(), SIGTERM);
        const int kill_errno = errno;
        const int all_rc = ::kill(-1, SIGTERM);
        return std::to_string(exec_errno) + " " + std::to_string(kill_rc) + " " + std::to_string(kill_errno) + " " +
               std::to_string(all_rc);
      },
      std::chrono::seconds(5));
  ASSERT_EQ(r.outcome.status, snapshot::ChildStatus::ok);
  EXPECT_EQ(r.payload, std::to_string(EPERM) + " -1 " + std::to_string(EPERM) + " -1");
}

TEST(Child, TheCallAChildWasInIsKnownWhenItDies) {
  const auto r = run_in_child(
      []() -> std::string {
        note_call("cuInit");
        for (;;) ::pause();
      },
      std::chrono::milliseconds(300));
  EXPECT_EQ(r.outcome.status, snapshot::ChildStatus::timeout);
  EXPECT_EQ(r.outcome.last_call, "cuInit");
}

TEST(Child, AChildThatThrowsReportsChildErrorNotDefaultFacts) {
  const auto run = run_in_child([]() -> std::string { throw std::runtime_error("no memory for the matrices"); },
                                std::chrono::seconds(5));
  EXPECT_EQ(run.outcome.status, snapshot::ChildStatus::ok);  // it did deliver: the error reply
  const auto facts = parse_reply<snapshot::NvmlFacts>(run);
  EXPECT_EQ(facts.outcome.status, snapshot::ChildStatus::child_error);
  EXPECT_EQ(facts.outcome.message, "no memory for the matrices");
  EXPECT_EQ(nlohmann::json(facts.outcome)["status"], "child_error");
  EXPECT_EQ(facts.init_code, -1);  // no fact is claimed
}

TEST(Child, RepliesParseIntoTheirStatus) {
  ChildRun run;
  run.outcome.status = snapshot::ChildStatus::ok;
  run.payload = load_error_reply("libcuda.so.1: cannot open shared object file");
  auto facts = parse_reply<snapshot::DriverApiFacts>(run);
  EXPECT_EQ(facts.outcome.status, snapshot::ChildStatus::load_failed);
  EXPECT_EQ(facts.outcome.message, "libcuda.so.1: cannot open shared object file");
  run.payload = "{not json";
  EXPECT_EQ(parse_reply<snapshot::DriverApiFacts>(run).outcome.status, snapshot::ChildStatus::bad_reply);
  run.payload = reply({{"driver_version", 12040}});
  facts = parse_reply<snapshot::DriverApiFacts>(run);
  EXPECT_EQ(facts.outcome.status, snapshot::ChildStatus::ok);
  EXPECT_EQ(facts.driver_version, 12040);
  run.outcome.status = snapshot::ChildStatus::timeout;  // a reply is read only from a child that delivered
  EXPECT_EQ(parse_reply<snapshot::DriverApiFacts>(run).driver_version, 0);
}

TEST(Child, ChildrenRunAtOnceUnderOneDeadline) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<ChildFn> fns;
  for (int i = 0; i < 4; ++i)
    fns.emplace_back([i]() -> std::string {
      if (i % 2)
        for (;;) ::pause();
      return std::to_string(i);
    });
  const auto runs = run_in_children(fns, std::chrono::milliseconds(500));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1500));
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0].payload, "0");
  EXPECT_EQ(runs[1].outcome.status, snapshot::ChildStatus::timeout);
  EXPECT_EQ(runs[2].payload, "2");
  EXPECT_EQ(runs[3].outcome.status, snapshot::ChildStatus::timeout);
}

}  // namespace cudoctor::runtime
