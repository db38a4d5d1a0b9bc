/*
 * The sandbox part of umbra-helper (sandbox.c, landlock.c): `umbra-helper sandbox` runs one command in
 * fresh namespaces with a read-only view of the system, Landlock and a seccomp filter;
 * `umbra-helper sandbox-probe` reports what the kernel offers.
 */
#ifndef UMBRA_SANDBOX_H
#define UMBRA_SANDBOX_H

#include <stddef.h>
#include <sys/types.h>

int cmd_sandbox(int argc, char **argv);
int cmd_sandbox_probe(int argc, char **argv);

/* landlock.c */

/* The Landlock ABI version the kernel offers (0: none); `why` gets the reason when 0. */
int landlock_abi(char *why, size_t why_size);

struct landlock_paths {
  const char **writable; /* full access beneath each */
  size_t writable_count;
  const char **devices; /* read, write and ioctl of device files beneath each (e.g. /dev) */
  size_t device_count;
};

/* Restricts this thread (and what it executes) to reading everywhere and writing only beneath the
 * writable paths. Needs no_new_privs. Returns 0, or -1 with `why` set. */
int landlock_apply(int abi, const struct landlock_paths *paths, char *why, size_t why_size);

/* hidden.c */

/* Empty mode-000 stand-ins in the sandbox's private /dev, bound over what is hidden or covered. */
#define STAND_IN_FILE "/dev/.umbra-hidden-file"
#define STAND_IN_DIR "/dev/.umbra-hidden-dir"

/* A folder whose entries are all hidden but `keep` (names). */
struct hidden_mask {
  const char *folder;
  const char **keep;
  size_t keep_count;
};

struct hidden_list {
  const char **paths; /* absolute paths hidden on their own */
  size_t count;
  struct hidden_mask *masks; /* a folder before the folders below it */
  size_t mask_count;
  const char **names; /* storage of the masks' kept names */
};

/* Reads the hidden paths and masked folders from `fd` (records ended by a NUL byte, see hidden.c) to
 * its end and closes `fd`. Returns 0, or -1 with `failure` set. */
int read_hidden(int fd, struct hidden_list *out);

/* Covers one path with a stand-in; nothing when it is absent or a symlink. 0, or -1 with `failure`. */
int hide_path(const char *path);

/* Masks the folders of the list, then hides its paths, in this mount namespace (see hidden.c), once the
 * stand-ins exist and before /dev is made read-only. 0, or -1 with `failure` set. */
int hide_paths(const struct hidden_list *list);

/* cgroup.c */

/* Makes this process's cgroup children "umbra-PID" limited to `nproc` processes (plus the sandbox's
 * init) and `memory` bytes (0: no limit), wherever that is possible. Returns how many controllers apply
 * (0: none; the rlimits alone then hold). */
int cgroup_prepare(long long nproc, long long memory);
/* How many of them are cgroup v2 children, which the outer process moves init into (cgroup_add). */
int cgroup_outer_moves(void);
/* In the sandbox's init, before it forks the command: enters the cgroup v1 children itself (no RCU
 * grace period, see cgroup.c); 0, or -1 with `failure` set. */
int cgroup_enter(void);
/* In the outer process, once init is cloned: moves process `pid` (init) into the cgroup v2 children and
 * closes what cgroup_enter() uses; 0, or -1 with `failure` set. */
int cgroup_add(pid_t pid);
/* Removes the children once the sandbox has ended. */
void cgroup_remove(void);

#endif
