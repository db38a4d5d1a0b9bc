#define _GNU_SOURCE
#include "common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char failure[FAILURE_LEN];

int fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(failure, sizeof failure, fmt, ap);
  va_end(ap);
  return -1;
}

int write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return fail("open %s: %s", path, strerror(errno));
  size_t len = strlen(text);
  ssize_t n = write(fd, text, len);
  int saved = errno;
  close(fd);
  if (n != (ssize_t)len) return fail("write %s: %s", path, strerror(n < 0 ? saved : EIO));
  return 0;
}

int map_own_ids(uid_t uid, gid_t gid) {
  char map[64];
  if (access("/proc/self/setgroups", F_OK) == 0 && write_file("/proc/self/setgroups", "deny") != 0) return -1;
  snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
  if (write_file("/proc/self/uid_map", map) != 0) return -1;
  snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
  return write_file("/proc/self/gid_map", map);
}

void usage_exit(const char *context, const char *hint, const char *fmt, va_list ap) {
  fprintf(stderr, "umbra-helper: %s", context);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "%s\n", hint);
  exit(EXIT_USAGE);
}

int read_to_end(int fd, size_t limit, const char *what, char **out, size_t *len) {
  size_t cap = 4096, used = 0;
  char *buf = malloc(cap);
  if (!buf) return fail("out of memory");
  for (;;) {
    if (used == cap) {
      char *bigger = cap < limit ? realloc(buf, cap * 2) : NULL;
      if (!bigger) {
        free(buf);
        return fail(cap < limit ? "out of memory" : "%s is too large", what);
      }
      buf = bigger;
      cap *= 2;
    }
    ssize_t n = read(fd, buf + used, cap - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      free(buf);
      return fail("read %s: %s", what, strerror(errno));
    }
    if (n == 0) break;
    used += (size_t)n;
  }
  close(fd);
  *out = buf;
  *len = used;
  return 0;
}
