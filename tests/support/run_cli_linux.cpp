#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "run_cli.hpp"

namespace cudoctor::testing {

std::string cudoctor_binary() {
  return CUDOCTOR_BINARY;
}

std::string shell_output(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  char buf[4096];
  while (p && std::fgets(buf, sizeof buf, p)) out += buf;
  if (p) ::pclose(p);
  return out;
}

// bash -n on one command line: 0 when it parses.
static int bash_parse(const std::string& command) {
  std::vector<std::string> argv_s = {"/bin/bash", "-n", "-c", command};
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  char* envp[] = {nullptr};
  const int rc = ::posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool bash_parses(const std::string& command) {
  return bash_parse(command) == 0;
}

namespace {

void collect_json(const nlohmann::json& j, std::vector<std::string>& out) {
  if (j.is_array()) {
    for (const auto& x : j) collect_json(x, out);
    return;
  }
  if (!j.is_object() || !j.contains("findings") || !j["findings"].is_array()) return;
  for (const auto& f : j["findings"]) {
    if (!f.is_object() || !f.contains("fix") || !f["fix"].is_object()) continue;
    for (const char* k : {"commands", "checks"})
      if (f["fix"].contains(k) && f["fix"][k].is_array())
        for (const auto& c : f["fix"][k])
          if (c.is_string()) out.push_back(c.get<std::string>());
  }
}

}  // namespace

void expect_fix_commands_parse(const std::string& output) {
  // Every command the tool tells a user to paste, in text ("$ cmd", "check: $ cmd") or in the
  // JSON report (fix.commands, fix.checks), must at least be valid shell.
  std::vector<std::string> commands;
  const auto j = nlohmann::json::parse(output, nullptr, false);
  if (!j.is_discarded()) {
    collect_json(j, commands);
  } else {
    std::istringstream in(output);
    std::string line;
    while (std::getline(in, line)) {
      auto p = line.find_first_not_of(' ');
      if (p == std::string::npos) continue;
      if (line.compare(p, 7, "check: ") == 0) p += 7;
      if (line.compare(p, 2, "$ ") == 0) commands.push_back(line.substr(p + 2));
    }
  }
  static std::mutex mu;
  static std::set<std::string> checked;
  for (const auto& c : commands) {
    {
      const std::lock_guard lock(mu);
      if (!checked.insert(c).second) continue;
    }
    EXPECT_EQ(bash_parse(c), 0) << "a printed fix command is not valid shell (bash -n): " << c;
  }
}

CliResult run_cudoctor(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                       const std::vector<std::string>& prefix) {
  std::map<std::string, std::string> full = {
      {"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"LANG", "C.UTF-8"}, {"HOME", "/nonexistent"}};
  // Sanitizer settings belong to the test harness, not to the machine under test.
  for (const char* k : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"})
    if (const char* v = std::getenv(k)) full[k] = v;
  for (const auto& [k, v] : env) full[k] = v;
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : full) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  std::vector<std::string> argv_s = prefix;
  argv_s.push_back(cudoctor_binary());
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);

  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
  pid_t pid = 0;
  if (::posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), envp.data()) != 0) throw std::runtime_error("spawn");
  posix_spawn_file_actions_destroy(&fa);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  CliResult r;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open = 2;
  while (open > 0) {
    if (::poll(fds, 2, 120000) <= 0) break;  // a hang fails the test instead of blocking the suite
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      const auto n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? r.out : r.err).append(buf, static_cast<std::size_t>(n));
      } else {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) {
      ::kill(pid, SIGKILL);
      ::close(f.fd);
    }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  expect_fix_commands_parse(r.out);
  return r;
}

}  // namespace cudoctor::testing
