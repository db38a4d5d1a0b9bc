/*
 * umbra-helper sandbox: runs one command in a sandbox.
 *
 *   umbra-helper sandbox --workspace W [--writable P]... [--hidden-fd N] [--protected P]... [--network]
 *                        [--cwd D] [--readable P]... [--nproc N] [--memory BYTES] [--cpu SECONDS] [--no-landlock]
 *                        [--join PID | --bind-source DIR] [--placeholder-dir J] [--workspace-placeholders]
 *                        --seccomp-fd N --report-fd N -- CMD [ARGS...]
 *
 * Steps, in this (outer) process, which stays outside the sandbox to clean up:
 *   1. read the seccomp program (classic BPF, made by src/sandbox/seccomp.ts) from --seccomp-fd;
 *   2. new user, mount, pid, ipc, uts (and, without --network, net) namespaces; with --join, the user and
 *      mount namespaces of a shadow branch's holder process instead of new ones (the branch is mounted
 *      there at the workspace's path); with --bind-source, DIR bound at the workspace's path;
 *   3. writable roots bound onto themselves, everything else made read-only and nosuid (recursively),
 *      writable roots made writable again; a private /dev (null, zero, full, random, urandom, tty, a new
 *      devpts, a /dev/shm tmpfs of a quarter of --memory); protected paths bound read-only (absent ones
 *      inside writable roots get an empty read-only placeholder directory, shared by concurrent runs
 *      through the journal J and removed by its last user, see make_placeholder; below the workspace
 *      only with --workspace-placeholders, which the caller passes for a shadow branch's view: the
 *      user's own folder gets none, the caller checks its absent protected paths after the run), their
 *      parents inside writable roots pinned as mount points so that they cannot be renamed away; hidden paths and masked folders (read from
 *      --hidden-fd: records ended by a NUL byte, so that any count and any name travel) hidden, see
 *      hide_paths(); every unix socket path bound in the host's network namespace that the view would
 *      show covered; an empty /run and a private /tmp (half of --memory; the host's in full-access,
 *      where / is writable), both carrying the roots below them over; with cgroups at hand (as root),
 *      cgroups limited to --nproc processes and --memory bytes made for the sandbox (see cgroup.c);
 *   4. fork the sandbox's init (pid 1 of the new pid namespace; in the cgroups before it forks the
 *      command: on cgroup v1 it enters them itself, on v2 the outer process moves it), which brings up
 *      the loopback of the new net namespace (its only interface: a private 127.0.0.1 and ::1), mounts
 *      a fresh /proc (with /proc/sys read-only), forks the command and answers the seccomp
 *      notifications of its tree;
 *   5. in the command's process: a new session (no controlling terminal), limits, no_new_privs,
 *      Landlock, no capabilities, no descriptors but 0-2, the seccomp filter (its listener handed to
 *      init), exec.
 *
 * Lines written to --report-fd: "seccomp NR A0 A1 A2 A3 A4 A5" for each denied system call (answered
 * with EPERM), "status exit N" or "status signal N" when the command ends, "setup REASON" when the
 * sandbox could not be set up (the helper then exits 125). When init exits, the kernel kills every process
 * left in the sandbox.
 *
 *   umbra-helper sandbox-probe
 *       Prints "userns ok|fail REASON", "landlock ABI [REASON]", "seccomp ok|fail REASON".
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "sandbox.h"

#define MAX_PATHS 4096
#define MAX_REPORTS 1000
#define WHY_LEN FAILURE_LEN

#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#define ATTR_RDONLY 0x00000001
#define ATTR_NOSUID 0x00000002
#define ATTR_NODEV 0x00000004
#define ATTR_NOEXEC 0x00000008
#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif
#define SECBITS_LOCKED_NOROOT 0x2f /* NOROOT, NO_SETUID_FIXUP, KEEP_CAPS_LOCKED and their locks */

struct setattr {
  uint64_t attr_set;
  uint64_t attr_clr;
  uint64_t propagation;
  uint64_t userns_fd;
};

struct path_list {
  const char *items[MAX_PATHS];
  size_t count;
};

struct options {
  const char *workspace;
  const char *cwd;
  const char *bind_source;
  const char *placeholder_dir;
  int workspace_placeholders; /* absent protected paths below the workspace get placeholders too */
  pid_t join;
  int network;
  int landlock;
  int seccomp_fd;
  int report_fd;
  long long nproc, memory, cpu;
  struct path_list writable, readable, protected;
  struct hidden_list hidden;
  char **argv;
};

static int report_fd = -1;
/* In init: closed by the outer process once it has moved init into the sandbox's cgroup v2 children
 * (-1: none; cgroup v1 children init enters itself, see cgroup.c). */
static int cgroup_gate = -1;
static struct sock_fprog filter;


static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report(const char *fmt, ...) {
  if (report_fd < 0) return;
  char line[WHY_LEN + 64];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line - 1, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n > sizeof line - 2) n = (int)sizeof line - 2;
  line[n++] = '\n';
  ssize_t written = write(report_fd, line, (size_t)n);
  (void)written;
}

static void die_setup(void) __attribute__((noreturn));
static void die_setup(void) {
  for (char *c = failure; *c; c++)
    if (*c == '\n') *c = ' ';
  report("setup %s", failure);
  fprintf(stderr, "umbra-helper: %s\n", failure);
  _exit(EXIT_SETUP);
}

static void usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void usage(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  usage_exit("sandbox: ", "", fmt, ap);
}

/* ---------- small file helpers ---------- */


static int set_attr(const char *path, uint64_t set, uint64_t clear, int recursive) {
  struct setattr attr = {.attr_set = set, .attr_clr = clear, .propagation = 0, .userns_fd = 0};
  if (syscall(SYS_mount_setattr, AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &attr, sizeof attr) != 0)
    return fail("mount_setattr %s: %s", path, strerror(errno));
  return 0;
}

static int bind_mount(const char *source, const char *target, int recursive) {
  if (mount(source, target, NULL, MS_BIND | (recursive ? MS_REC : 0), NULL) != 0)
    return fail("bind %s on %s: %s", source, target, strerror(errno));
  return 0;
}

static int bind_readonly(const char *source, const char *target, uint64_t extra) {
  if (bind_mount(source, target, 1) != 0) return -1;
  return set_attr(target, ATTR_RDONLY | extra, 0, 1);
}

static int is_below(const char *path, const char *root) {
  size_t n = strlen(root);
  if (strcmp(root, "/") == 0) return 1;
  return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static int is_writable(const struct options *o, const char *path) {
  for (size_t i = 0; i < o->writable.count; i++)
    if (is_below(path, o->writable.items[i])) return 1;
  return 0;
}

static int listed(const struct path_list *list, const char *path) {
  for (size_t i = 0; i < list->count; i++)
    if (strcmp(list->items[i], path) == 0) return 1;
  return 0;
}

static int is_mount_point(const char *path) {
  struct stat here, up;
  char parent[PATH_MAX];
  if (lstat(path, &here) != 0) return 0;
  snprintf(parent, sizeof parent, "%s/..", path);
  if (stat(parent, &up) != 0) return 0;
  return here.st_dev != up.st_dev || here.st_ino == up.st_ino;
}

/* ---------- namespaces ---------- */


/* With --join: the user and mount namespaces of the branch's holder, where the branch is mounted. */
static int join_branch(const struct options *o) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/ns/user", (int)o->join);
  int user = open(path, O_RDONLY | O_CLOEXEC);
  snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)o->join);
  int mnt = open(path, O_RDONLY | O_CLOEXEC);
  if (user < 0 || mnt < 0) return fail("the branch's mount (pid %d) is gone: %s", (int)o->join, strerror(errno));
  if (setns(user, CLONE_NEWUSER) != 0) return fail("join the branch's user namespace: %s", strerror(errno));
  if (setns(mnt, CLONE_NEWNS) != 0) return fail("join the branch's mount namespace: %s", strerror(errno));
  close(user);
  close(mnt);
  return 0;
}

/* Forks the sandbox's init into new namespaces (a new user namespace unless a branch's is joined). */
static pid_t clone_init(const struct options *o) {
  long flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | (o->network ? 0 : CLONE_NEWNET);
  if (o->join <= 0) flags |= CLONE_NEWUSER;
  pid_t pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
  if (pid < 0) {
    if (o->join <= 0)
      fail("cannot create user namespaces: %s (unprivileged user namespaces are disabled: enable them with "
           "sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces=10000 or "
           "kernel.apparmor_restrict_unprivileged_userns=0)",
           strerror(errno));
    else fail("cannot create the sandbox's namespaces: %s", strerror(errno));
  }
  return pid;
}

/* Brings up `lo` in the sandbox's own network namespace (without --network it has nothing else): the
 * command gets a private 127.0.0.1 and ::1 that reach nothing of the host. */
static int bring_up_loopback(void) {
  int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (sock < 0) return fail("loopback: socket: %s", strerror(errno));
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
  int rc = ioctl(sock, SIOCGIFFLAGS, &ifr);
  if (rc == 0) {
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    rc = ioctl(sock, SIOCSIFFLAGS, &ifr);
  }
  int saved = errno;
  close(sock);
  if (rc != 0) return fail("bring up the sandbox's loopback: %s", strerror(saved));
  return 0;
}

/* ---------- host unix sockets ---------- */

/* Whether `path`, below the private `dir` (/tmp, /run), is carried over into it: below the workspace, a
 * writable root or a readable root that lies below `dir` (see make_private). */
static int carried_into(const struct options *o, const char *path, const char *dir) {
  const struct path_list *lists[] = {&o->writable, &o->readable};
  if (strcmp(o->workspace, dir) != 0 && is_below(o->workspace, dir) && is_below(path, o->workspace)) return 1;
  for (size_t l = 0; l < 2; l++)
    for (size_t i = 0; i < lists[l]->count; i++) {
      const char *root = lists[l]->items[i];
      if (strcmp(root, dir) != 0 && is_below(root, dir) && is_below(path, root)) return 1;
    }
  return 0;
}

/* Whether the host's unix socket at `path` would show in the sandbox: everywhere but the private /tmp
 * and /run, and there in what they carry over (/var/run is /run). */
static int socket_shows(const struct options *o, const char *path, int private_tmp) {
  char run[PATH_MAX];
  if (is_below(path, "/var/run")) {
    snprintf(run, sizeof run, "/run%s", path + strlen("/var/run"));
    path = run;
  }
  if (is_below(path, "/run")) return carried_into(o, path, "/run");
  if (private_tmp && is_below(path, "/tmp")) return carried_into(o, path, "/tmp");
  return 1;
}

/* Paths of unix sockets bound in this (the host's) network namespace that the sandbox would show, read
 * before leaving it: each is covered (wherever the workspace lies, /tmp and /run included). */
static void host_socket_paths(const struct options *o, struct path_list *out) {
  int private_tmp = 1;
  for (size_t i = 0; i < o->writable.count; i++) private_tmp &= strcmp(o->writable.items[i], "/") != 0;
  FILE *table = fopen("/proc/net/unix", "re");
  if (!table) return;
  char *line = NULL;
  size_t size = 0;
  while (getline(&line, &size, table) > 0 && out->count < MAX_PATHS) {
    char *slash = strstr(line, " /");
    if (!slash) continue;
    char *path = slash + 1;
    path[strcspn(path, "\n")] = '\0';
    if (!socket_shows(o, path, private_tmp)) continue;
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    int seen = 0;
    for (size_t i = 0; i < out->count && !seen; i++) seen = strcmp(out->items[i], path) == 0;
    if (!seen) out->items[out->count++] = strdup(path);
  }
  free(line);
  fclose(table);
}

/* ---------- placeholders for absent protected paths ---------- */

/*
 * An absent protected path inside a writable root gets an empty, read-only directory in its place for
 * the run: a mount needs something to cover. Always a directory, also at a file's name: git shows no
 * empty directory (an empty file would appear in `git status`), and a directory blocks creating a file
 * of that name just as well. The first missing component of the path is the one created. Below the
 * workspace only with --workspace-placeholders (a shadow branch's view, where they land in the branch):
 * in the user's own folder nothing is made, the caller checks what appeared there after the run. The
 * journal is swept either way, so that older versions' leftovers in the user's folder still go.
 *
 * Runs share placeholders and can be killed, so each placeholder is journaled in --placeholder-dir (in
 * umbra's data directory) as a file named DEV-INO that holds the placeholder's path. Every run using a
 * placeholder holds a shared flock on its entry; at the end, a run that can take the lock exclusively is
 * the last user and removes the placeholder, if it is still the same (empty) directory. Removing it
 * earlier would detach the read-only mounts that other runs' namespaces have on it. Entries that no run
 * holds are leftovers of killed runs: the next run removes them (sweep_journal). The file "lock" of the
 * journal makes each run's look-create-adopt and remove steps atomic.
 */

struct placeholder {
  char path[PATH_MAX]; /* as this (outer) process sees it */
  char view[PATH_MAX]; /* the same inside the sandbox (differs with --bind-source) */
  dev_t dev;
  ino_t ino;
  int entry; /* the journal entry, share-locked while the run lasts */
};
static struct placeholder placeholders[64];
static size_t placeholder_count;
static int journal_dir = -1;
static int journal_lock = -1;

static void entry_name(char *out, size_t size, dev_t dev, ino_t ino) {
  snprintf(out, size, "%llx-%llx", (unsigned long long)dev, (unsigned long long)ino);
}

/* mkdir -p, owner-only */
static int make_dirs(const char *dir) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s", dir);
  for (char *c = path + 1; *c; c++) {
    if (*c != '/') continue;
    *c = '\0';
    if (mkdir(path, 0700) != 0 && errno != EEXIST) return fail("mkdir %s: %s", path, strerror(errno));
    *c = '/';
  }
  if (mkdir(path, 0700) != 0 && errno != EEXIST) return fail("mkdir %s: %s", path, strerror(errno));
  return 0;
}

/* Opens the journal (made when missing) and takes its lock; held until release_journal(). */
static int open_journal(const char *dir) {
  if (make_dirs(dir) != 0) return -1;
  journal_dir = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (journal_dir < 0) return fail("open the placeholder journal %s: %s", dir, strerror(errno));
  journal_lock = openat(journal_dir, "lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (journal_lock < 0) return fail("open %s/lock: %s", dir, strerror(errno));
  while (flock(journal_lock, LOCK_EX) != 0)
    if (errno != EINTR) return fail("lock %s/lock: %s", dir, strerror(errno));
  return 0;
}

static void release_journal(void) {
  if (journal_lock >= 0) flock(journal_lock, LOCK_UN);
}

/* The path an entry records (its whole content); 0, or -1 when unreadable. */
static int read_entry(int fd, char *path, size_t size) {
  ssize_t n = pread(fd, path, size - 1, 0);
  if (n <= 0) return -1;
  path[n] = '\0';
  return 0;
}

/* Removes the placeholder at `path` if it is still that directory (rmdir leaves it when something was
 * put inside). */
static void remove_dir(const char *path, dev_t dev, ino_t ino) {
  struct stat st;
  if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_dev == dev && st.st_ino == ino) rmdir(path);
}

/* Removes the placeholder an exclusively locked entry records, then the entry. */
static void remove_entry(const char *name, const char *path, dev_t dev, ino_t ino) {
  remove_dir(path, dev, ino);
  unlinkat(journal_dir, name, 0);
}

/* Removes the placeholders of runs that were killed: entries that no run holds. A placeholder made in
 * another mount namespace (a shadow branch's) does not match here: only its entry goes. */
static void sweep_journal(void) {
  int fd = dup(journal_dir);
  DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
  if (!dir) {
    if (fd >= 0) close(fd);
    return;
  }
  struct dirent *d;
  while ((d = readdir(dir)) != NULL) {
    unsigned long long dev, ino;
    char end;
    if (sscanf(d->d_name, "%llx-%llx%c", &dev, &ino, &end) != 2) continue;
    int entry = openat(journal_dir, d->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (entry < 0) continue;
    char path[PATH_MAX];
    if (flock(entry, LOCK_EX | LOCK_NB) == 0) {
      if (read_entry(entry, path, sizeof path) == 0) remove_entry(d->d_name, path, (dev_t)dev, (ino_t)ino);
      else unlinkat(journal_dir, d->d_name, 0);
    }
    close(entry);
  }
  closedir(dir);
}

#define MAX_PLACEHOLDERS (sizeof placeholders / sizeof placeholders[0])

static int add_placeholder(const char *path, const char *view, const struct stat *st, int entry) {
  /* Fails closed: an absent protected path left without a placeholder would be writable. */
  if (placeholder_count >= MAX_PLACEHOLDERS) {
    close(entry);
    return fail("cannot protect %s: more than %zu absent protected paths", view, MAX_PLACEHOLDERS);
  }
  if (flock(entry, LOCK_SH | LOCK_NB) != 0) {
    close(entry);
    return fail("lock the placeholder journal entry of %s: %s", path, strerror(errno));
  }
  struct placeholder *p = &placeholders[placeholder_count++];
  snprintf(p->path, sizeof p->path, "%s", path);
  snprintf(p->view, sizeof p->view, "%s", view);
  p->dev = st->st_dev;
  p->ino = st->st_ino;
  p->entry = entry;
  return 0;
}

/* If `path` is a journaled placeholder (of a run still going, or a leftover), this run shares it: 1.
 * 0 when it is not one (user content), -1 on failure. */
static int adopt_placeholder(const char *path, const char *view, const struct stat *st) {
  if (!S_ISDIR(st->st_mode) || journal_dir < 0) return 0;
  char name[64], recorded[PATH_MAX];
  entry_name(name, sizeof name, st->st_dev, st->st_ino);
  int entry = openat(journal_dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (entry < 0) return 0;
  if (read_entry(entry, recorded, sizeof recorded) != 0 || strcmp(recorded, path) != 0) {
    close(entry);
    return 0;
  }
  return add_placeholder(path, view, st, entry) == 0 ? 1 : -1;
}

static int create_placeholder(const char *path, const char *view) {
  if (journal_dir < 0) return fail("cannot protect the absent %s: no --placeholder-dir", view);
  if (placeholder_count >= MAX_PLACEHOLDERS)
    return fail("cannot protect %s: more than %zu absent protected paths", view, MAX_PLACEHOLDERS);
  if (mkdir(path, 0555) != 0) return errno == EEXIST ? 0 : fail("cannot protect %s: %s", view, strerror(errno));
  struct stat st;
  char name[64];
  int entry = -1;
  if (lstat(path, &st) == 0) {
    entry_name(name, sizeof name, st.st_dev, st.st_ino);
    entry = openat(journal_dir, name, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  }
  size_t len = strlen(path);
  if (entry < 0 || write(entry, path, len) != (ssize_t)len) {
    int saved = errno;
    if (entry >= 0) {
      close(entry);
      unlinkat(journal_dir, name, 0);
    }
    rmdir(path);
    return fail("journal the placeholder %s: %s", view, strerror(saved));
  }
  return add_placeholder(path, view, &st, entry);
}

/* Where the outer process finds the sandbox's `view` path: the same, but inside --bind-source when that
 * is shown at the workspace's path. */
static void outer_path(const struct options *o, const char *view, char *out) {
  size_t n = strlen(o->workspace);
  if (o->bind_source && is_below(view, o->workspace)) snprintf(out, PATH_MAX, "%s%s", o->bind_source, view + n);
  else snprintf(out, PATH_MAX, "%s", view);
}

/* Gives the absent protected `view` a placeholder, or shares an existing one: the path itself (made by
 * another run) or its deepest existing ancestor (another run's placeholder for a path above it, whose
 * read-only mount covers this one too). */
static int make_placeholder(const struct options *o, const char *view) {
  char path[PATH_MAX], first[PATH_MAX], parent[PATH_MAX], first_view[PATH_MAX];
  /* A path too long to name whole (only the command can have made it) gets none: a truncated copy of it
   * would name some other path. */
  if (strlen(view) + (o->bind_source ? strlen(o->bind_source) : 0) >= PATH_MAX) return 0;
  /* Nothing is made in the user's own folder: the caller checks its absent protected paths afterwards. */
  if (!o->workspace_placeholders && is_below(view, o->workspace)) return 0;
  outer_path(o, view, path);
  struct stat st;
  if (lstat(path, &st) == 0) return adopt_placeholder(path, view, &st) < 0 ? -1 : 0;
  /* climb to the first missing component whose parent exists */
  snprintf(first, sizeof first, "%s", path);
  snprintf(first_view, sizeof first_view, "%s", view);
  for (;;) {
    snprintf(parent, sizeof parent, "%s", first);
    char *slash = strrchr(parent, '/');
    if (!slash || slash == parent) return 0;
    *slash = '\0';
    if (lstat(parent, &st) == 0) break;
    snprintf(first, sizeof first, "%s", parent);
    *strrchr(first_view, '/') = '\0';
  }
  if (!S_ISDIR(st.st_mode)) return 0;
  char parent_view[PATH_MAX];
  snprintf(parent_view, sizeof parent_view, "%s", first_view);
  *strrchr(parent_view, '/') = '\0';
  int shared = adopt_placeholder(parent, parent_view, &st);
  if (shared != 0) return shared < 0 ? -1 : 0;
  if (!is_writable(o, first_view)) return 0;
  return create_placeholder(first, first_view);
}

static void *remove_dir_thread(void *arg) {
  const struct placeholder *p = arg;
  remove_dir(p->path, p->dev, p->ino);
  return NULL;
}

/* At the end of the run: removes the placeholders no other run uses, and lets go of the others. Their
 * folders are removed at once, a thread each: an rmdir can wait for the disk (ext4 mounted with
 * `discard` trims the folder's block before rmdir returns: 1-2 ms each on a busy VM), and one after the
 * other they added up. Each journal entry goes only once its folder is gone. */
static void remove_placeholders(void) {
  if (placeholder_count == 0) return;
  while (flock(journal_lock, LOCK_EX) != 0 && errno == EINTR) {
  }
  pthread_t threads[MAX_PLACEHOLDERS];
  int removing[MAX_PLACEHOLDERS], started[MAX_PLACEHOLDERS];
  for (size_t i = placeholder_count; i-- > 0;) {
    struct placeholder *p = &placeholders[i];
    /* Converting a shared lock drops it first: when the conversion fails, another run (or this run's
     * other entry for the same placeholder, closed here) still holds its lock, and the last one removes
     * the placeholder. */
    removing[i] = flock(p->entry, LOCK_EX | LOCK_NB) == 0;
    started[i] = removing[i] && pthread_create(&threads[i], NULL, remove_dir_thread, p) == 0;
    if (removing[i] && !started[i]) remove_dir(p->path, p->dev, p->ino);
    if (!removing[i]) close(p->entry);
  }
  for (size_t i = 0; i < placeholder_count; i++) {
    struct placeholder *p = &placeholders[i];
    if (!removing[i]) continue;
    if (started[i]) pthread_join(threads[i], NULL);
    char name[64];
    entry_name(name, sizeof name, p->dev, p->ino);
    unlinkat(journal_dir, name, 0);
    close(p->entry);
  }
  placeholder_count = 0;
  release_journal();
}

/* ---------- the filesystem view ---------- */

static int clone_tree(const char *path, int recursive) {
  int fd = (int)syscall(SYS_open_tree, AT_FDCWD, path, 1 /* OPEN_TREE_CLONE */ | O_CLOEXEC | (recursive ? AT_RECURSIVE : 0));
  if (fd < 0) return fail("open_tree %s: %s", path, strerror(errno));
  return fd;
}

static int attach_tree(int fd, const char *target) {
  int rc = (int)syscall(SYS_move_mount, fd, "", AT_FDCWD, target, 0x00000004 /* MOVE_MOUNT_F_EMPTY_PATH */);
  int saved = errno;
  close(fd);
  if (rc != 0) return fail("mount on %s: %s", target, strerror(saved));
  return 0;
}

/*
 * Mount options of a private tmpfs holding at most `size` bytes (0: the kernel's default, half the RAM).
 * With a memory limit, /tmp gets half of it and /dev/shm a quarter: a command filling them gets ENOSPC
 * and goes on, rather than meeting the cgroup's OOM killer (the cgroup counts tmpfs pages), and its
 * processes keep the rest.
 */
static void tmpfs_options(char *out, size_t size_of_out, long long size) {
  if (size > 0) snprintf(out, size_of_out, "mode=1777,size=%lld", size < 4096 ? 4096 : size);
  else snprintf(out, size_of_out, "mode=1777");
}

/* A private /dev: a tmpfs with the harmless devices of the host bound in, a new devpts, a /dev/shm tmpfs,
 * and the stand-ins that cover hidden paths. Made read-only once the stand-ins are in use. */
static int make_dev(const struct options *o) {
  static const char *devices[] = {"null", "zero", "full", "random", "urandom", "tty"};
  enum { N = sizeof devices / sizeof devices[0] };
  int trees[N];
  char path[PATH_MAX];
  for (size_t i = 0; i < N; i++) {
    snprintf(path, sizeof path, "/dev/%s", devices[i]);
    trees[i] = clone_tree(path, 0);
    if (trees[i] < 0) return -1;
  }
  if (mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k") != 0)
    return fail("mount tmpfs on /dev: %s", strerror(errno));
  for (size_t i = 0; i < N; i++) {
    snprintf(path, sizeof path, "/dev/%s", devices[i]);
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) return fail("create %s: %s", path, strerror(errno));
    close(fd);
    if (attach_tree(trees[i], path) != 0) return -1;
  }
  if (mkdir("/dev/pts", 0755) != 0) return fail("mkdir /dev/pts: %s", strerror(errno));
  if (mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620") != 0)
    return fail("mount devpts: %s", strerror(errno));
  if (mkdir("/dev/shm", 01777) != 0) return fail("mkdir /dev/shm: %s", strerror(errno));
  char shm[64];
  tmpfs_options(shm, sizeof shm, o->memory / 4);
  if (mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, shm) != 0)
    return fail("mount tmpfs on /dev/shm: %s", strerror(errno));
  static const char *links[][2] = {{"pts/ptmx", "/dev/ptmx"},
                                   {"/proc/self/fd", "/dev/fd"},
                                   {"/proc/self/fd/0", "/dev/stdin"},
                                   {"/proc/self/fd/1", "/dev/stdout"},
                                   {"/proc/self/fd/2", "/dev/stderr"}};
  for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
    if (symlink(links[i][0], links[i][1]) != 0) return fail("symlink %s: %s", links[i][1], strerror(errno));
  if (mkdir(STAND_IN_DIR, 0) != 0) return fail("mkdir %s: %s", STAND_IN_DIR, strerror(errno));
  int fd = open(STAND_IN_FILE, O_WRONLY | O_CREAT | O_CLOEXEC, 0);
  if (fd < 0) return fail("create %s: %s", STAND_IN_FILE, strerror(errno));
  close(fd);
  return 0;
}

/*
 * A private `dir` (/tmp, or /run): a tmpfs mounted with `flags` and `data`, read-only when `readonly`;
 * the workspace, writable roots and readable roots below `dir` are carried over into it (Landlock still
 * allows writes only beneath writable roots), with the mounts that cover their hidden and protected
 * paths and sockets.
 */
static int make_private(const struct options *o, const char *dir, unsigned long flags, const char *data, int readonly) {
  int trees[MAX_PATHS];
  const char *paths[MAX_PATHS];
  const char *wanted[MAX_PATHS + 1];
  size_t wanted_count = 0, count = 0;
  size_t prefix = strlen(dir);
  wanted[wanted_count++] = o->workspace;
  for (size_t i = 0; i < o->writable.count && wanted_count <= MAX_PATHS; i++) wanted[wanted_count++] = o->writable.items[i];
  for (size_t i = 0; i < o->readable.count && wanted_count <= MAX_PATHS; i++) wanted[wanted_count++] = o->readable.items[i];
  for (size_t i = 0; i < wanted_count; i++) {
    const char *root = wanted[i];
    struct stat st;
    if (!is_below(root, dir) || strcmp(root, dir) == 0 || stat(root, &st) != 0) continue;
    /* Only a root carried over itself can carry a nested one: / (a writable root in full-access) does not. */
    int nested = 0;
    for (size_t j = 0; j < wanted_count && !nested; j++)
      nested = j != i && is_below(wanted[j], dir) && strcmp(wanted[j], dir) != 0 && is_below(root, wanted[j]) &&
               (strcmp(root, wanted[j]) != 0 || j < i);
    if (nested) continue;
    trees[count] = clone_tree(root, 1);
    if (trees[count] < 0) return -1;
    paths[count++] = root;
  }
  if (mount("tmpfs", dir, "tmpfs", flags, data) != 0) return fail("mount tmpfs on %s: %s", dir, strerror(errno));
  for (size_t i = 0; i < count; i++) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", paths[i]);
    for (char *c = path + prefix + 1; *c; c++) {
      if (*c != '/') continue;
      *c = '\0';
      if (mkdir(path, 0755) != 0 && errno != EEXIST) return fail("mkdir %s: %s", path, strerror(errno));
      *c = '/';
    }
    if (mkdir(path, 0755) != 0 && errno != EEXIST) return fail("mkdir %s: %s", path, strerror(errno));
    if (attach_tree(trees[i], paths[i]) != 0) return -1;
  }
  return readonly ? set_attr(dir, ATTR_RDONLY, 0, 0) : 0;
}

/* Pins the directories between a writable root and `path` as mount points, so that the command cannot
 * rename them away (and put a writable look-alike in their place). */
static int pin_parents(const struct options *o, const char *path) {
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", path);
  for (;;) {
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return 0;
    *slash = '\0';
    int root = 0;
    for (size_t i = 0; i < o->writable.count; i++) root |= strcmp(dir, o->writable.items[i]) == 0;
    if (root || !is_writable(o, dir)) return 0;
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    if (!is_mount_point(dir) && bind_mount(dir, dir, 1) != 0) return -1;
  }
}

/* Makes `path` read-only: bound onto itself (or the stand-in over a planted symlink), then read-only. */
static int protect(const struct options *o, const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return 0;
  if (pin_parents(o, path) != 0) return -1;
  if (S_ISLNK(st.st_mode)) {
    /* A planted link: cover the link itself with the stand-in (the new mount API does not follow it). */
    int tree = clone_tree(STAND_IN_FILE, 0);
    if (tree < 0 || attach_tree(tree, path) != 0) return -1;
    return set_attr(path, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV | ATTR_NOEXEC, 0, 0);
  }
  if (!is_writable(o, path) && !is_mount_point(path)) return 0; /* read-only already */
  return bind_readonly(path, path, ATTR_NOSUID | ATTR_NODEV);
}

static int make_view(const struct options *o, const struct path_list *sockets) {
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return fail("make / private: %s", strerror(errno));
  if (o->bind_source && bind_mount(o->bind_source, o->workspace, 1) != 0) return -1;
  int everything = 0;
  for (size_t i = 0; i < o->writable.count; i++) everything |= strcmp(o->writable.items[i], "/") == 0;
  if (everything && set_attr("/", ATTR_NOSUID, 0, 1) != 0) return -1;
  if (!everything) {
    for (size_t i = 0; i < o->writable.count; i++) {
      struct stat st;
      if (stat(o->writable.items[i], &st) != 0) continue;
      if (bind_mount(o->writable.items[i], o->writable.items[i], 1) != 0) return -1;
    }
    /* nosuid too: a setuid file in the workspace (made outside) gains nothing here */
    if (set_attr("/", ATTR_RDONLY | ATTR_NOSUID, 0, 1) != 0) return -1;
    for (size_t i = 0; i < o->writable.count; i++) {
      struct stat st;
      if (stat(o->writable.items[i], &st) != 0) continue;
      if (set_attr(o->writable.items[i], 0, ATTR_RDONLY, 1) != 0 &&
          set_attr(o->writable.items[i], 0, ATTR_RDONLY, 0) != 0)
        return -1;
    }
  }
  if (make_dev(o) != 0) return -1;
  for (size_t i = 0; i < o->protected.count; i++)
    if (protect(o, o->protected.items[i]) != 0) return -1;
  for (size_t i = 0; i < placeholder_count; i++)
    if (!listed(&o->protected, placeholders[i].view) && protect(o, placeholders[i].view) != 0) return -1;
  if (hide_paths(&o->hidden) != 0) return -1;
  for (size_t i = 0; i < sockets->count; i++)
    if (hide_path(sockets->items[i]) != 0) return -1;
  if (set_attr("/dev", ATTR_RDONLY, 0, 0) != 0) return -1;
  struct stat st;
  if (lstat("/run", &st) == 0 && S_ISDIR(st.st_mode) &&
      make_private(o, "/run", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=64k", 1) != 0)
    return -1;
  /* With / writable (full-access) nothing of the filesystem is restricted: the host's /tmp stays. */
  if (everything) return 0;
  char tmp[64];
  tmpfs_options(tmp, sizeof tmp, o->memory / 2);
  return make_private(o, "/tmp", MS_NOSUID | MS_NODEV, tmp, 0);
}

/* ---------- the command's process ---------- */

static int drop_capabilities(void) {
  for (int cap = 0; cap <= 63; cap++)
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) return fail("drop capability %d: %s", cap, strerror(errno));
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  if (prctl(PR_SET_SECUREBITS, SECBITS_LOCKED_NOROOT, 0, 0, 0) != 0)
    return fail("set securebits: %s", strerror(errno));
  struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  if (syscall(SYS_capset, &header, data) != 0) return fail("capset: %s", strerror(errno));
  return 0;
}

static int set_limit(int resource, long long value, long long hard_extra, const char *name) {
  if (value <= 0) return 0;
  struct rlimit limit = {.rlim_cur = (rlim_t)value, .rlim_max = (rlim_t)(value + hard_extra)};
  struct rlimit now;
  if (getrlimit(resource, &now) == 0 && now.rlim_max != RLIM_INFINITY) {
    if (limit.rlim_max > now.rlim_max) limit.rlim_max = now.rlim_max;
    if (limit.rlim_cur > limit.rlim_max) limit.rlim_cur = limit.rlim_max;
  }
  if (setrlimit(resource, &limit) != 0) return fail("limit %s: %s", name, strerror(errno));
  return 0;
}

static int send_fd(int sock, int fd) {
  char data = 'L';
  struct iovec iov = {.iov_base = &data, .iov_len = 1};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } control;
  memset(&control, 0, sizeof control);
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof control.buf};
  struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
  return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

static int receive_fd(int sock) {
  char data;
  struct iovec iov = {.iov_base = &data, .iov_len = 1};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } control;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof control.buf};
  ssize_t n;
  while ((n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  if (n != 1) return -1;
  struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
  if (!cmsg || cmsg->cmsg_type != SCM_RIGHTS) return -1;
  int fd;
  memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
  return fd;
}

static void run_command(const struct options *o, int listener_sock) __attribute__((noreturn));
static void run_command(const struct options *o, int listener_sock) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  signal(SIGPIPE, SIG_DFL);
  const char *cwd = o->cwd ? o->cwd : o->workspace;
  if (chdir(cwd) != 0) {
    fail("cannot enter %s: %s", cwd, strerror(errno));
    die_setup();
  }
  /* A session of its own: no controlling terminal (/dev/tty fails with ENXIO), so the command can
   * neither read what the user types nor write to the user's terminal. */
  if (setsid() < 0) {
    fail("setsid: %s", strerror(errno));
    die_setup();
  }
  if (set_limit(RLIMIT_NPROC, o->nproc, 0, "processes") != 0 || set_limit(RLIMIT_DATA, o->memory, 0, "memory") != 0 ||
      set_limit(RLIMIT_CPU, o->cpu, 5, "CPU time") != 0 || set_limit(RLIMIT_CORE, 0, 0, "core") != 0)
    die_setup();
  struct rlimit nocore = {0, 0};
  setrlimit(RLIMIT_CORE, &nocore);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    fail("no_new_privs: %s", strerror(errno));
    die_setup();
  }
  if (o->landlock > 0) {
    const char *writable[MAX_PATHS + 2];
    size_t count = 0;
    for (size_t i = 0; i < o->writable.count && count < MAX_PATHS; i++) writable[count++] = o->writable.items[i];
    writable[count++] = "/tmp";
    writable[count++] = "/dev/shm";
    const char *devices[] = {"/dev"};
    struct landlock_paths paths = {.writable = writable,
                                   .writable_count = count,
                                   .devices = devices,
                                   .device_count = 1};
    if (landlock_apply(o->landlock, &paths, failure, sizeof failure) != 0) die_setup();
  }
  if (drop_capabilities() != 0) die_setup();
  /* Only 0-2 and the socket to init stay open; the report descriptor closes here too. */
  int keep = listener_sock;
  if (keep > 3) syscall(SYS_close_range, 3, keep - 1, 0);
  syscall(SYS_close_range, keep + 1, ~0U, 0);
  if (filter.len > 0) {
    int listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &filter);
    if (listener < 0) {
      fprintf(stderr, "umbra-helper: seccomp: %s\n", strerror(errno));
      _exit(EXIT_SETUP);
    }
    if (send_fd(listener_sock, listener) != 0) _exit(EXIT_SETUP);
    close(listener);
  }
  close(listener_sock);
  execvp(o->argv[0], o->argv);
  int saved = errno;
  fprintf(stderr, "umbra-helper: cannot run %s: %s\n", o->argv[0], strerror(saved));
  _exit(saved == ENOENT ? 127 : 126);
}

/* ---------- init: pid 1 of the sandbox ---------- */

static void answer_notifications(int listener, struct seccomp_notif *req, struct seccomp_notif_resp *resp,
                                 size_t req_size, size_t resp_size, int *reports) {
  memset(req, 0, req_size);
  if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req) != 0) return;
  if (*reports < MAX_REPORTS) {
    (*reports)++;
    const __u64 *a = req->data.args;
    report("seccomp %d %llu %llu %llu %llu %llu %llu", req->data.nr, (unsigned long long)a[0], (unsigned long long)a[1],
           (unsigned long long)a[2], (unsigned long long)a[3], (unsigned long long)a[4], (unsigned long long)a[5]);
  }
  memset(resp, 0, resp_size);
  resp->id = req->id;
  resp->error = -EPERM;
  resp->val = 0;
  resp->flags = 0;
  ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
}

static void sandbox_init(const struct options *o, const struct path_list *sockets, uid_t uid, gid_t gid)
    __attribute__((noreturn));
static void sandbox_init(const struct options *o, const struct path_list *sockets, uid_t uid, gid_t gid) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (o->join <= 0 && map_own_ids(uid, gid) != 0) die_setup();
  if (!o->network && bring_up_loopback() != 0) die_setup();
  if (make_view(o, sockets) != 0) die_setup();
  prctl(PR_SET_DUMPABLE, 0);
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) {
    fail("mount /proc: %s", strerror(errno));
    die_setup();
  }
  if (bind_readonly("/proc/sys", "/proc/sys", ATTR_NOSUID | ATTR_NODEV | ATTR_NOEXEC) != 0) die_setup();
  if (sethostname("sandbox", 7) != 0) {
    /* cosmetic */
  }
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    fail("socketpair: %s", strerror(errno));
    die_setup();
  }
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGHUP);
  sigprocmask(SIG_BLOCK, &mask, NULL);
  int signals = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (cgroup_enter() != 0) die_setup();
  if (cgroup_gate >= 0) {
    char byte;
    while (read(cgroup_gate, &byte, 1) < 0 && errno == EINTR) {
    }
    close(cgroup_gate);
  }
  pid_t command = fork();
  if (command < 0) {
    fail("fork: %s", strerror(errno));
    die_setup();
  }
  if (command == 0) {
    close(pair[0]);
    if (signals >= 0) close(signals);
    run_command(o, pair[1]);
  }
  close(pair[1]);
  int listener = filter.len > 0 ? receive_fd(pair[0]) : -1;
  close(pair[0]);
  struct seccomp_notif_sizes sizes = {0, 0, 0};
  syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes);
  size_t req_size = sizes.seccomp_notif > sizeof(struct seccomp_notif) ? sizes.seccomp_notif : sizeof(struct seccomp_notif);
  size_t resp_size = sizes.seccomp_notif_resp > sizeof(struct seccomp_notif_resp) ? sizes.seccomp_notif_resp
                                                                                   : sizeof(struct seccomp_notif_resp);
  struct seccomp_notif *req = calloc(1, req_size);
  struct seccomp_notif_resp *resp = calloc(1, resp_size);
  int reports = 0;
  int status = 0;
  for (;;) {
    struct pollfd fds[2] = {{.fd = signals, .events = POLLIN, .revents = 0}, {.fd = listener, .events = POLLIN, .revents = 0}};
    int n = poll(fds, listener >= 0 ? 2 : 1, -1);
    if (n < 0 && errno != EINTR) break;
    if (listener >= 0 && (fds[1].revents & POLLIN) && req && resp)
      answer_notifications(listener, req, resp, req_size, resp_size, &reports);
    if (listener >= 0 && (fds[1].revents & (POLLHUP | POLLERR | POLLNVAL)) && !(fds[1].revents & POLLIN)) {
      close(listener);
      listener = -1;
    }
    if (fds[0].revents & POLLIN) {
      struct signalfd_siginfo info;
      while (read(signals, &info, sizeof info) == (ssize_t)sizeof info) {
        if (info.ssi_signo != SIGCHLD) kill(command, (int)info.ssi_signo);
      }
      int done = 0;
      for (;;) {
        int st;
        pid_t pid = waitpid(-1, &st, WNOHANG);
        if (pid <= 0) break;
        if (pid == command) {
          status = st;
          done = 1;
        }
      }
      if (done) break;
    }
  }
  if (WIFSIGNALED(status)) {
    report("status signal %d", WTERMSIG(status));
    _exit(128 + WTERMSIG(status));
  }
  report("status exit %d", WEXITSTATUS(status));
  _exit(WEXITSTATUS(status));
}

/* ---------- the outer process ---------- */

static volatile sig_atomic_t init_pid = 0;

static void stop_sandbox(int sig) {
  (void)sig;
  if (init_pid > 0) kill(init_pid, SIGKILL);
}

static int read_filter(int fd) {
  char *buf;
  size_t len;
  if (read_to_end(fd, (size_t)1 << 20, "the seccomp program", &buf, &len) != 0) return -1;
  if (len == 0 || len % sizeof(struct sock_filter) != 0 || len / sizeof(struct sock_filter) > 4096)
    return fail("the seccomp program has a bad size (%zu bytes)", len);
  filter.len = (unsigned short)(len / sizeof(struct sock_filter));
  filter.filter = (struct sock_filter *)buf;
  return 0;
}

static long long number(const char *name, const char *text) {
  char *end;
  long long value = strtoll(text, &end, 10);
  if (*end != '\0' || value < 0) usage("%s needs a non-negative number", name);
  return value;
}

static void add_path(struct path_list *list, const char *name, const char *path) {
  if (path[0] != '/') usage("%s needs an absolute path: %s", name, path);
  if (list->count >= MAX_PATHS) usage("too many %s paths", name);
  list->items[list->count++] = path;
}

int cmd_sandbox(int argc, char **argv) {
  static struct options o;
  memset(&o, 0, sizeof o);
  o.seccomp_fd = -1;
  o.report_fd = -1;
  o.landlock = 1;
  int hidden_fd = -1;
  int i = 0;
  for (; i < argc; i++) {
    const char *arg = argv[i];
    if (strcmp(arg, "--") == 0) {
      i++;
      break;
    }
    if (strcmp(arg, "--network") == 0) {
      o.network = 1;
      continue;
    }
    if (strcmp(arg, "--no-landlock") == 0) {
      o.landlock = 0;
      continue;
    }
    if (strcmp(arg, "--workspace-placeholders") == 0) {
      o.workspace_placeholders = 1;
      continue;
    }
    if (i + 1 >= argc) usage("%s needs a value", arg);
    const char *value = argv[++i];
    if (strcmp(arg, "--workspace") == 0) o.workspace = value;
    else if (strcmp(arg, "--cwd") == 0) o.cwd = value;
    else if (strcmp(arg, "--bind-source") == 0) o.bind_source = value;
    else if (strcmp(arg, "--placeholder-dir") == 0) o.placeholder_dir = value;
    else if (strcmp(arg, "--writable") == 0) add_path(&o.writable, arg, value);
    else if (strcmp(arg, "--readable") == 0) add_path(&o.readable, arg, value);
    else if (strcmp(arg, "--hidden-fd") == 0) hidden_fd = (int)number(arg, value);
    else if (strcmp(arg, "--protected") == 0) add_path(&o.protected, arg, value);
    else if (strcmp(arg, "--join") == 0) o.join = (pid_t)number(arg, value);
    else if (strcmp(arg, "--nproc") == 0) o.nproc = number(arg, value);
    else if (strcmp(arg, "--memory") == 0) o.memory = number(arg, value);
    else if (strcmp(arg, "--cpu") == 0) o.cpu = number(arg, value);
    else if (strcmp(arg, "--seccomp-fd") == 0) o.seccomp_fd = (int)number(arg, value);
    else if (strcmp(arg, "--report-fd") == 0) o.report_fd = (int)number(arg, value);
    else usage("unknown option %s", arg);
  }
  if (i >= argc) usage("no command after --");
  if (!o.workspace || o.workspace[0] != '/') usage("--workspace needs an absolute path");
  if (o.seccomp_fd < 0) usage("--seccomp-fd is required");
  o.argv = argv + i;
  report_fd = o.report_fd;
  if (report_fd >= 0) fcntl(report_fd, F_SETFD, FD_CLOEXEC);
  signal(SIGPIPE, SIG_IGN);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (read_filter(o.seccomp_fd) != 0) die_setup();
  if (hidden_fd >= 0 && read_hidden(hidden_fd, &o.hidden) != 0) die_setup();
  if (o.landlock) {
    o.landlock = landlock_abi(failure, sizeof failure);
    if (o.landlock == 0) die_setup();
  }
  static struct path_list sockets;
  host_socket_paths(&o, &sockets);
  /* Before a branch's user namespace is joined: the cgroups are the host's. */
  int cgroups = cgroup_prepare(o.nproc, o.memory);
  int gate[2] = {-1, -1};
  if (cgroup_outer_moves() > 0 && pipe2(gate, O_CLOEXEC) != 0) {
    fail("pipe: %s", strerror(errno));
    die_setup();
  }
  /* The journal is opened in this mount namespace, before a branch's is joined: leftovers in the
   * user's folder are looked at where they are. */
  if (o.placeholder_dir && o.protected.count > 0) {
    if (open_journal(o.placeholder_dir) != 0) die_setup();
    sweep_journal();
  }
  if (o.join > 0 && join_branch(&o) != 0) die_setup();
  for (size_t k = 0; k < o.protected.count; k++) {
    if (make_placeholder(&o, o.protected.items[k]) != 0) {
      remove_placeholders();
      die_setup();
    }
  }
  release_journal();
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = stop_sandbox;
  sigemptyset(&sa.sa_mask);
  static const int stops[] = {SIGTERM, SIGINT, SIGHUP};
  for (size_t k = 0; k < sizeof stops / sizeof stops[0]; k++) sigaction(stops[k], &sa, NULL);
  uid_t uid = getuid();
  gid_t gid = getgid();
  fflush(NULL);
  pid_t pid = clone_init(&o);
  if (pid < 0) {
    cgroup_remove();
    remove_placeholders();
    die_setup();
  }
  if (pid == 0) {
    for (size_t k = 0; k < sizeof stops / sizeof stops[0]; k++) signal(stops[k], SIG_DFL);
    if (gate[1] >= 0) close(gate[1]);
    cgroup_gate = gate[0];
    sandbox_init(&o, &sockets, uid, gid);
  }
  init_pid = pid;
  if (gate[0] >= 0) close(gate[0]);
  /* init forks the command once the gate closes: with a failed move it is killed first */
  if (cgroups > 0 && cgroup_add(pid) != 0) {
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    cgroup_remove();
    remove_placeholders();
    die_setup();
  }
  if (gate[1] >= 0) close(gate[1]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  cgroup_remove();
  remove_placeholders();
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* ---------- sandbox-probe ---------- */

int cmd_sandbox_probe(int argc, char **argv) {
  (void)argv;
  if (argc > 0) usage("sandbox-probe takes no arguments");
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    uid_t uid = getuid();
    gid_t gid = getgid();
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) != 0) {
      printf("userns fail %s\n", strerror(errno));
      fflush(stdout);
      _exit(1);
    }
    if (map_own_ids(uid, gid) != 0) {
      printf("userns fail %s\n", failure);
      fflush(stdout);
      _exit(1);
    }
    printf("userns ok\n");
    fflush(stdout);
    _exit(0);
  }
  int status = 0;
  if (pid > 0) waitpid(pid, &status, 0);
  else printf("userns fail fork: %s\n", strerror(errno));
  char reason[WHY_LEN] = "";
  int abi = landlock_abi(reason, sizeof reason);
  if (abi > 0) printf("landlock %d\n", abi);
  else printf("landlock 0 %s\n", reason);
  long mode = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
  struct seccomp_notif_sizes sizes;
  if (mode < 0) printf("seccomp fail %s\n", strerror(errno));
  else if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0)
    printf("seccomp fail no user notification support: %s (needs Linux 5.0+)\n", strerror(errno));
  else printf("seccomp ok\n");
  return fflush(stdout) == 0 ? 0 : 1;
}
