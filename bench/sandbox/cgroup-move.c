/*
 * What one move into a cgroup v1 child costs, the two ways the sandbox helper could make it (issue 12):
 * the parent writing the child's pid into `cgroup.procs` (the global cgroup_threadgroup_rwsem taken for
 * writing: an RCU grace period), and the child writing "0" into `tasks` itself (the calling thread: no
 * such lock). Makes DIR/umbra-move-probe, moves a fresh child into it --runs times each way (a pause
 * between runs, so that no grace period is shared), prints each time, removes it.
 * Build and run as root (or wherever DIR is writable), DIR a cgroup v1 folder such as /sys/fs/cgroup/pids:
 *   cc -O2 -o /tmp/cgroup-move bench/sandbox/cgroup-move.c && /tmp/cgroup-move /sys/fs/cgroup/pids 8
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* One move of a fresh child: by the parent through cgroup.procs, or by the child through tasks. */
static double move_once(const char *child_dir, int self) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", child_dir, self ? "tasks" : "cgroup.procs");
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    perror(path);
    exit(1);
  }
  int report[2];
  if (pipe(report) != 0) exit(1);
  pid_t pid = fork();
  if (pid == 0) {
    if (self) {
      double started = now_ms();
      if (write(fd, "0", 1) != 1) _exit(1);
      double took = now_ms() - started;
      if (write(report[1], &took, sizeof took) != (ssize_t)sizeof took) _exit(1);
    } else {
      pause();
    }
    _exit(0);
  }
  double took = 0;
  if (self) {
    if (read(report[0], &took, sizeof took) != (ssize_t)sizeof took) exit(1);
  } else {
    char text[32];
    int n = snprintf(text, sizeof text, "%d", (int)pid);
    double started = now_ms();
    if (write(fd, text, (size_t)n) != n) perror("write cgroup.procs");
    took = now_ms() - started;
    kill(pid, SIGKILL);
  }
  waitpid(pid, NULL, 0);
  close(fd);
  close(report[0]);
  close(report[1]);
  return took;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: cgroup-move DIR [RUNS]\n");
    return 2;
  }
  int runs = argc > 2 ? atoi(argv[2]) : 8;
  char child[4096];
  snprintf(child, sizeof child, "%s/umbra-move-probe", argv[1]);
  if (mkdir(child, 0700) != 0) {
    perror(child);
    return 1;
  }
  for (int self = 0; self <= 1; self++) {
    printf("%s:", self ? "the child writes 0 into tasks" : "the parent writes the pid into cgroup.procs");
    for (int i = 0; i < runs; i++) {
      printf(" %.3f", move_once(child, self));
      fflush(stdout);
      usleep(60000);
    }
    printf(" ms\n");
  }
  rmdir(child);
  return 0;
}
