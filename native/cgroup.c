/*
 * Cgroup limits of a sandbox: a process count (pids.max) and a memory limit (memory.max on cgroup v2,
 * memory.limit_in_bytes on v1; both count tmpfs pages, so the private /tmp and /dev/shm are inside it).
 * They matter most as root, where RLIMIT_NPROC does not apply. Used wherever the caller may make a child
 * of its own cgroup with the controller enabled (root; a delegated cgroup v2 subtree); elsewhere the
 * rlimits alone apply. v1 and v2 are handled alike: for each controller, the child "umbra-PID" of the
 * caller's cgroup in the hierarchy that holds it.
 *
 * cgroup_prepare() makes the children with their limits. The sandbox's init then enters them before it
 * forks the command (it forks nothing before), in one of two ways:
 *   - cgroup v1: init itself writes "0" into each child's `tasks` file (opened here, before init is
 *     cloned, so that init needs no access to the cgroup mounts): cgroup_enter(). Moving the calling
 *     thread is the one move for which the kernel skips the global cgroup_threadgroup_rwsem, whose
 *     write side waits for an RCU grace period (5-12 ms here; writing a pid into `cgroup.procs` took
 *     it on every run). init is single-threaded, so the thread is the whole process.
 *   - cgroup v2 (no such file): the outer process writes init's pid into `cgroup.procs` while init sets
 *     up the view, and init waits for it: cgroup_add().
 * cgroup_remove() removes the children when the sandbox has ended. Children left by a killed helper
 * (their PID gone) are removed by the next run.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "sandbox.h"

struct controller {
  const char *name;     /* as /proc/self/cgroup and mount options name it */
  const char *v1_limit; /* the limit file on cgroup v1 */
  const char *v2_limit; /* on cgroup v2 */
};

static const struct controller controllers[] = {
    {"pids", "pids.max", "pids.max"},
    {"memory", "memory.limit_in_bytes", "memory.max"},
};
enum { CONTROLLERS = sizeof controllers / sizeof controllers[0] };

static char parents[CONTROLLERS][PATH_MAX]; /* the caller's own cgroup, per controller ("" when unusable) */
static char children[CONTROLLERS][PATH_MAX];
static int versions[CONTROLLERS];              /* 1 or 2, of the child's hierarchy */
static int tasks_fds[CONTROLLERS] = {-1, -1};  /* v1: the child's `tasks`, for cgroup_enter() */

static int put(const char *dir, const char *file, const char *text) {
  char path[PATH_MAX];
  if (snprintf(path, sizeof path, "%s/%s", dir, file) >= (int)sizeof path) return -1;
  return write_file(path, text);
}

/* Where the hierarchy holding `name` is mounted (v2: the cgroup2 mount); 0, or -1 when none. */
static int mount_point(const char *name, int v2, char *out, size_t size) {
  FILE *f = fopen("/proc/self/mountinfo", "re");
  if (!f) return -1;
  char *line = NULL;
  size_t cap = 0;
  int found = -1;
  while (found != 0 && getline(&line, &cap, f) > 0) {
    char *dash = strstr(line, " - ");
    if (!dash) continue;
    char type[32], source[64], options[512], point[PATH_MAX];
    if (sscanf(dash, " - %31s %63s %511s", type, source, options) != 3) continue;
    if (sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1) continue;
    if (v2 ? strcmp(type, "cgroup2") != 0 : strcmp(type, "cgroup") != 0) continue;
    if (!v2) {
      int has = 0;
      for (char *opt = strtok(options, ","); opt && !has; opt = strtok(NULL, ",")) has = strcmp(opt, name) == 0;
      if (!has) continue;
    }
    snprintf(out, size, "%s", point);
    found = 0;
  }
  free(line);
  fclose(f);
  return found;
}

/* The caller's cgroup directory for controller `c`, from /proc/self/cgroup; the version of its
 * hierarchy (1 or 2), or -1. */
static int own_cgroup(const struct controller *c, char *out, size_t size) {
  FILE *f = fopen("/proc/self/cgroup", "re");
  if (!f) return -1;
  char *line = NULL;
  size_t cap = 0;
  char v1[PATH_MAX] = "", v2[PATH_MAX] = "";
  while (getline(&line, &cap, f) > 0) {
    line[strcspn(line, "\n")] = '\0';
    char *names = strchr(line, ':');
    char *path = names ? strchr(names + 1, ':') : NULL;
    if (!path) continue;
    *path++ = '\0';
    names++;
    if (*names == '\0') snprintf(v2, sizeof v2, "%s", path);
    for (char *n = strtok(names, ","); n; n = strtok(NULL, ","))
      if (strcmp(n, c->name) == 0) snprintf(v1, sizeof v1, "%s", path);
  }
  free(line);
  fclose(f);
  char point[PATH_MAX];
  if (v1[0] && mount_point(c->name, 0, point, sizeof point) == 0) {
    snprintf(out, size, "%s%s", point, strcmp(v1, "/") == 0 ? "" : v1);
    return 1;
  }
  if (v2[0] && mount_point(c->name, 1, point, sizeof point) == 0) {
    snprintf(out, size, "%s%s", point, strcmp(v2, "/") == 0 ? "" : v2);
    return 2;
  }
  return -1;
}

/* Removes the children of `dir` left by helpers that are gone. */
static void sweep(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    int pid;
    char end;
    if (sscanf(e->d_name, "umbra-%d%c", &pid, &end) != 1 || pid <= 0) continue;
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path) rmdir(path);
  }
  closedir(d);
}

int cgroup_prepare(long long nproc, long long memory) {
  char pid[32];
  snprintf(pid, sizeof pid, "%d", (int)getpid());
  int made = 0;
  for (size_t i = 0; i < CONTROLLERS; i++) {
    parents[i][0] = children[i][0] = '\0';
    long long limit = i == 0 ? nproc : memory;
    if (limit <= 0) continue;
    int version = own_cgroup(&controllers[i], parents[i], sizeof parents[i]);
    if (version < 0 || access(parents[i], W_OK) != 0) {
      parents[i][0] = '\0';
      continue;
    }
    sweep(parents[i]);
    char *child = children[i];
    if (snprintf(child, PATH_MAX, "%s/umbra-%s", parents[i], pid) >= PATH_MAX) continue;
    /* Another controller of the same (v2) hierarchy may have made it already. */
    if (mkdir(child, 0700) != 0 && errno != EEXIST) {
      child[0] = '\0';
      continue;
    }
    char text[32];
    /* pids: the command's processes and the sandbox's init */
    snprintf(text, sizeof text, "%lld", i == 0 ? limit + 1 : limit);
    if (put(child, version == 2 ? controllers[i].v2_limit : controllers[i].v1_limit, text) != 0) {
      int shared = 0;
      for (size_t j = 0; j < i; j++) shared |= strcmp(children[j], child) == 0;
      if (!shared) rmdir(child);
      child[0] = '\0';
      continue;
    }
    versions[i] = version;
    if (version == 1) {
      char path[PATH_MAX];
      if (snprintf(path, sizeof path, "%s/tasks", child) < (int)sizeof path)
        tasks_fds[i] = open(path, O_WRONLY | O_CLOEXEC);
      if (tasks_fds[i] < 0) {
        rmdir(child);
        child[0] = '\0';
        continue;
      }
    }
    made++;
  }
  return made;
}

int cgroup_outer_moves(void) {
  int count = 0;
  for (size_t i = 0; i < CONTROLLERS; i++) count += children[i][0] && versions[i] == 2;
  return count;
}

int cgroup_enter(void) {
  for (size_t i = 0; i < CONTROLLERS; i++) {
    if (tasks_fds[i] < 0) continue;
    ssize_t n = write(tasks_fds[i], "0", 1);
    int saved = errno;
    close(tasks_fds[i]);
    tasks_fds[i] = -1;
    if (n != 1) return fail("enter the sandbox's %s cgroup: %s", controllers[i].name, strerror(saved));
  }
  return 0;
}

static void close_tasks(void) {
  for (size_t i = 0; i < CONTROLLERS; i++) {
    if (tasks_fds[i] >= 0) close(tasks_fds[i]);
    tasks_fds[i] = -1;
  }
}

int cgroup_add(pid_t pid) {
  close_tasks(); /* init has its own copies */
  char text[32];
  snprintf(text, sizeof text, "%d", (int)pid);
  for (size_t i = 0; i < CONTROLLERS; i++) {
    if (!children[i][0] || versions[i] != 2) continue;
    if (put(children[i], "cgroup.procs", text) != 0) {
      char why[FAILURE_LEN];
      snprintf(why, sizeof why, "%s", failure);
      return fail("move the sandbox into its cgroup: %s", why);
    }
  }
  return 0;
}

void cgroup_remove(void) {
  close_tasks();
  for (size_t i = 0; i < CONTROLLERS; i++) {
    if (!children[i][0]) continue;
    rmdir(children[i]);
    children[i][0] = '\0';
  }
}
