/*
 * What every part of umbra-helper shares: the one-line reason of the last failure, writing a small file,
 * and mapping the caller's own uid and gid into a fresh user namespace.
 */
#ifndef UMBRA_COMMON_H
#define UMBRA_COMMON_H

#include <stdarg.h>
#include <sys/types.h>

#define FAILURE_LEN 1024

/* Exit statuses of the helper: bad usage, and a setup step that failed (the reason on stderr). */
#define EXIT_USAGE 2
#define EXIT_SETUP 125

/* Why the last step failed, one line. */
extern char failure[FAILURE_LEN];

/* Records the reason (printf-style) in `failure` and returns -1. */
int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Writes `text` to an existing file (e.g. under /proc); 0, or -1 with `failure` set. */
int write_file(const char *path, const char *text);

/* Reads `fd` to its end (at most `limit` bytes) into a new buffer `*out` of `*len` bytes, then closes it.
 * `what` names the content in the reason of a failure. 0, or -1 with `failure` set. */
int read_to_end(int fd, size_t limit, const char *what, char **out, size_t *len);

/* Prints "umbra-helper: <context><message><hint>" on stderr and exits with EXIT_USAGE. */
void usage_exit(const char *context, const char *hint, const char *fmt, va_list ap) __attribute__((noreturn));

/* In a fresh user namespace: denies setgroups and maps `uid`/`gid` to themselves. */
int map_own_ids(uid_t uid, gid_t gid);

#endif
