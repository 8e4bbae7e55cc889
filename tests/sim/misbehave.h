/* Misbehaviours that vendor libraries show on broken machines, shared by the simulated
 * libraries. One call site misbehaves at a time:
 *   SIM_MISBEHAVE   "<where>:<what>"; where is a call site: ctor (the library's
 *                   constructor), nvml_init, cu_init, rt_count, rt_malloc, rt_memcpy
 *   what:
 *     close_fds_hang  closes every inherited descriptor (the reply pipe too), then blocks
 *     sleep           sleeps 30 s, then carries on
 *     grandchild      starts a helper that leaves the process group (setsid) and keeps the
 *                     reply pipe open for good; the call itself then succeeds
 *     hang            blocks for good
 *     touch           creates $SIM_CANARY_DIR/loaded (proves the library was loaded)
 *     escape          tries what a probe child must never do, leaving a file in
 *                     $SIM_CANARY_DIR for each that got through: run a program, create a
 *                     symbolic link, a directory or a device node, remove or rename a file,
 *                     signal cudoctor
 *   SIM_EXCLUSIVE   a file: contexts behave as on a GPU in EXCLUSIVE_PROCESS compute mode,
 *                   one process at a time (an flock on that file, held 300 ms), others get
 *                   error 46 (device unavailable)
 *   SIM_TAG         anything: lets a test find processes left behind by their environment. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

static void sim_canary(const char* name) {
  const char* dir = getenv("SIM_CANARY_DIR");
  if (!dir) return;
  char p[4096];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0) close(fd);
}

static void sim_escape(void) {
  const char* dir = getenv("SIM_CANARY_DIR");
  if (!dir) return;
  char p[4096], q[4096];
  pid_t pid = fork();
  if (pid == 0) {
    snprintf(p, sizeof p, "%s/exec-ran", dir);
    execl("/bin/sh", "sh", "-c", "touch \"$0\"", p, (char*)0);
    _exit(127);
  }
  if (pid > 0) waitpid(pid, 0, 0);
  snprintf(p, sizeof p, "%s/symlink-made", dir);
  if (symlink("/", p) == 0) sim_canary("symlink-made.ok");
  snprintf(p, sizeof p, "%s/dir-made", dir);
  if (mkdir(p, 0755) == 0) sim_canary("dir-made.ok");
  snprintf(p, sizeof p, "%s/node-made", dir);
  if (mknod(p, S_IFCHR | 0666, makedev(1, 3)) == 0) sim_canary("node-made.ok");
  snprintf(p, sizeof p, "%s/victim", dir);
  if (unlink(p) == 0) sim_canary("victim-removed");
  snprintf(p, sizeof p, "%s/victim2", dir);
  snprintf(q, sizeof q, "%s/victim2-renamed", dir);
  if (rename(p, q) == 0) sim_canary("victim2-renamed.ok");
  if (kill(getppid(), SIGTERM) == 0) sim_canary("parent-signalled");
}

static void sim_misbehave(const char* where) {
  const char* m = getenv("SIM_MISBEHAVE");
  const size_t n = strlen(where);
  if (!m || strncmp(m, where, n) != 0 || m[n] != ':') return;
  const char* what = m + n + 1;
  if (!strcmp(what, "close_fds_hang")) {
    for (int fd = 3; fd < 4096; ++fd) close(fd);
    for (;;) pause();
  }
  if (!strcmp(what, "sleep")) sleep(30);
  if (!strcmp(what, "grandchild") && fork() == 0) {
    setsid();
    for (;;) pause();
  }
  if (!strcmp(what, "hang"))
    for (;;) pause();
  if (!strcmp(what, "touch")) sim_canary("loaded");
  if (!strcmp(what, "escape")) sim_escape();
}

/* 0, or 46 when another process holds the simulated exclusive-process GPU. */
static int sim_exclusive_context(void) {
  const char* path = getenv("SIM_EXCLUSIVE");
  if (!path) return 0;
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return 0;
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    close(fd);
    return 46;
  }
  usleep(300 * 1000); /* the context lives a while; the lock goes with the process */
  return 0;
}

__attribute__((constructor)) static void sim_constructor(void) {
  sim_misbehave("ctor");
}
