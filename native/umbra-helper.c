/*
 * umbra-helper: the small native part of umbra's shadow branches.
 *
 *   umbra-helper mount-exec --lower L --upper U --work K --target T
 *                           --mode overlay|fuse-overlayfs|bind [--cwd D] -- CMD [ARGS...]
 *       Enters a private user + mount namespace, mounts the branch at T (the workspace's own path) and
 *       runs CMD there. overlay: kernel overlayfs (lower L, upper U, work dir K, userxattr);
 *       fuse-overlayfs: the fuse-overlayfs program with the same layers; bind: the full copy L bound
 *       over T. Setup failures exit 125 with one line "umbra-helper: ..." on stderr.
 *   umbra-helper mount-exec --join PID --target T [--cwd D] [--holder-log F] -- CMD [ARGS...]
 *       Runs CMD in the namespaces of PID (a `hold` process), where the branch is already mounted, so
 *       that every process of a branch shares one mount and sees the others' writes at once.
 *   umbra-helper hold --lower L --upper U --work K --target T --mode overlay|fuse-overlayfs
 *       Mounts the branch in new namespaces and keeps it mounted until stdin closes or SIGTERM.
 *   umbra-helper opaque DIR...
 *       Prints the DIRs whose overlay "opaque" xattr is "y", one per line.
 *   umbra-helper sandbox ... -- CMD [ARGS...]   and   umbra-helper sandbox-probe
 *       Run a command in the sandbox; report what the kernel offers for it (see sandbox.c).
 *   umbra-helper probe [--dir D]
 *       Tries every mount mode (and reflink copies) on a tiny tree made under D (default /tmp) and
 *       prints one line per mode: "<mode> ok" or "<mode> fail <reason>".
 *
 * mount-exec is a sequence of steps, one function each (enter_namespaces, make_mounts_private,
 * mount_branch, enter_cwd, run_command), so that later steps (pid/net/ipc/uts namespaces, a fresh
 * /proc, Landlock, seccomp) can be inserted before the command is executed.
 *
 * Usage errors exit 2 with a one-line message on stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <linux/fs.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "sandbox.h"

#define EXIT_CANNOT_EXEC 126
#define EXIT_NOT_FOUND 127

#define ERR_LEN FAILURE_LEN

enum mount_mode { MODE_OVERLAY, MODE_FUSE, MODE_BIND };

struct branch_spec {
  const char *lower;
  const char *upper;
  const char *work;
  const char *target;
  const char *cwd;
  const char *holder_log; /* where the holder writes its errors (for --join) */
  pid_t join;             /* a holder process whose namespaces already have the branch mounted */
  enum mount_mode mode;
  char **argv; /* the command, NULL-terminated */
};


static void usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void usage(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  usage_exit("", " (usage: umbra-helper mount-exec|hold|opaque|probe|sandbox|sandbox-probe ...)", fmt, ap);
}

static void die_setup(void) __attribute__((noreturn));
static void die_setup(void) {
  fprintf(stderr, "umbra-helper: %s\n", failure);
  exit(EXIT_SETUP);
}

/* out = dir + "/" + name; fails when it does not fit. */
static int join_path(char *out, size_t size, const char *dir, const char *name) {
  int n = snprintf(out, size, "%s/%s", dir, name);
  if (n < 0 || (size_t)n >= size) return fail("path too long: %s/%s", dir, name);
  return 0;
}

/* ---------- step 1: user + mount namespace ---------- */

/* A private user namespace in which the caller keeps its own uid and gid, and a private mount namespace. */
static int enter_namespaces(void) {
  uid_t uid = getuid();
  gid_t gid = getgid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
    return fail("cannot create a user and mount namespace: %s (unprivileged user namespaces may be disabled)",
                strerror(errno));
  return map_own_ids(uid, gid);
}

/* ---------- step 2: nothing mounted here propagates back to the host ---------- */

static int make_mounts_private(void) {
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
    return fail("cannot make / private: %s", strerror(errno));
  return 0;
}

/* ---------- step 3: the branch at the target path ---------- */

/* An O_PATH descriptor of a directory, so that a mount can name it by /proc/self/fd/N: no escaping of
 * commas or colons in the mount options, and the lower layer is resolved before the target covers it. */
static int open_dir(const char *what, const char *path) {
  int fd = open(path, O_PATH | O_DIRECTORY);
  if (fd < 0) return fail("%s %s: %s", what, path, strerror(errno));
  return fd;
}

/* The three layers of a branch as O_PATH descriptors (lower, upper, work), and the overlay options that
 * name them; -1 (nothing left open) when one cannot be opened. */
struct layers {
  int fd[3];
  char options[256];
};

static int open_layers(const struct branch_spec *spec, struct layers *out) {
  const char *what[3] = {"lower", "upper", "work dir"};
  const char *path[3] = {spec->lower, spec->upper, spec->work};
  for (int k = 0; k < 3; k++) {
    out->fd[k] = open_dir(what[k], path[k]);
    if (out->fd[k] < 0) {
      while (k-- > 0) close(out->fd[k]);
      return -1;
    }
  }
  snprintf(out->options, sizeof out->options,
           "lowerdir=/proc/self/fd/%d,upperdir=/proc/self/fd/%d,workdir=/proc/self/fd/%d", out->fd[0], out->fd[1],
           out->fd[2]);
  return 0;
}

static void close_layers(const struct layers *layers) {
  for (int k = 0; k < 3; k++) close(layers->fd[k]);
}

static int mount_overlay(const struct branch_spec *spec) {
  struct layers layers;
  if (open_layers(spec, &layers) != 0) return -1;
  char options[sizeof layers.options + 16];
  snprintf(options, sizeof options, "%s,userxattr", layers.options);
  int rc = mount("overlay", spec->target, "overlay", 0, options);
  int saved = errno;
  close_layers(&layers);
  if (rc != 0) return fail("mount overlay on %s: %s", spec->target, strerror(saved));
  return 0;
}

static int mount_bind(const struct branch_spec *spec) {
  if (mount(spec->lower, spec->target, NULL, MS_BIND | MS_REC, NULL) != 0)
    return fail("bind %s on %s: %s", spec->lower, spec->target, strerror(errno));
  return 0;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Starts fuse-overlayfs in the foreground (so that it stays in the caller's process group and dies with
 * it) and waits until the mount is in place. */
static int mount_fuse(const struct branch_spec *spec, pid_t *daemon) {
  struct stat before;
  if (stat(spec->target, &before) != 0) return fail("target %s: %s", spec->target, strerror(errno));
  struct layers layers;
  if (open_layers(spec, &layers) != 0) return -1;
  int err[2];
  if (pipe2(err, O_CLOEXEC) != 0) {
    close_layers(&layers);
    return fail("pipe: %s", strerror(errno));
  }
  pid_t pid = fork();
  if (pid < 0) {
    close_layers(&layers);
    return fail("fork: %s", strerror(errno));
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
      dup2(devnull, STDIN_FILENO);
      dup2(devnull, STDOUT_FILENO);
    }
    dup2(err[1], STDERR_FILENO);
    execlp("fuse-overlayfs", "fuse-overlayfs", "-f", "-o", layers.options, spec->target, (char *)NULL);
    fprintf(stderr, "cannot run fuse-overlayfs: %s", strerror(errno));
    _exit(EXIT_NOT_FOUND);
  }
  close(err[1]);
  close_layers(&layers);
  *daemon = pid;
  for (int waited = 0; waited < 10000; waited++) {
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      char text[ERR_LEN - 64] = "";
      ssize_t n = read(err[0], text, sizeof text - 1);
      text[n > 0 ? n : 0] = '\0';
      for (char *c = text; *c; c++)
        if (*c == '\n') *c = ' ';
      close(err[0]);
      *daemon = 0;
      return fail("fuse-overlayfs exited before mounting: %s", text[0] ? text : "no reason given");
    }
    struct stat now;
    if (stat(spec->target, &now) == 0 && now.st_dev != before.st_dev) {
      close(err[0]);
      return 0;
    }
    sleep_ms(1);
  }
  close(err[0]);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  *daemon = 0;
  return fail("fuse-overlayfs did not mount %s within 10 s", spec->target);
}

static int mount_branch(const struct branch_spec *spec, pid_t *daemon) {
  switch (spec->mode) {
  case MODE_OVERLAY:
    return mount_overlay(spec);
  case MODE_FUSE:
    return mount_fuse(spec, daemon);
  case MODE_BIND:
    return mount_bind(spec);
  }
  return fail("unknown mode");
}

/* ---------- step 4: the working directory, resolved inside the mounted branch ---------- */

static int enter_cwd(const struct branch_spec *spec) {
  const char *dir = spec->cwd ? spec->cwd : spec->target;
  if (chdir(dir) != 0) return fail("cannot enter %s: %s", dir, strerror(errno));
  return 0;
}

/* ---------- step 5: the command ---------- */

static void exec_command(char **argv) __attribute__((noreturn));
static void exec_command(char **argv) {
  execvp(argv[0], argv);
  int saved = errno;
  fprintf(stderr, "umbra-helper: cannot run %s: %s\n", argv[0], strerror(saved));
  exit(saved == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC);
}

static volatile sig_atomic_t child_pid = 0;

static void forward_signal(int sig) {
  if (child_pid > 0) kill(child_pid, sig);
}

/* With a fuse daemon to look after, the command runs as a child; signals are passed on, and when the
 * command ends the branch is unmounted and the daemon stopped. Exits as the command did. */
static void supervise_command(const struct branch_spec *spec, pid_t daemon) __attribute__((noreturn));
static void supervise_command(const struct branch_spec *spec, pid_t daemon) {
  static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = forward_signal;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) sigaction(forwarded[i], &sa, NULL);
  pid_t pid = fork();
  if (pid < 0) {
    fail("fork: %s", strerror(errno));
    kill(daemon, SIGTERM);
    die_setup();
  }
  if (pid == 0) {
    sa.sa_handler = SIG_DFL;
    for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) sigaction(forwarded[i], &sa, NULL);
    exec_command(spec->argv);
  }
  child_pid = pid;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  umount2(spec->target, MNT_DETACH);
  kill(daemon, SIGTERM);
  while (waitpid(daemon, NULL, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    signal(sig, SIG_DFL);
    kill(getpid(), sig);
    exit(128 + sig);
  }
  exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

/* ---------- joining a branch already mounted by a holder process ---------- */

/* 1 while `pid` is a live process (not a zombie). */
static int process_alive(pid_t pid) {
  char path[64], text[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return 0;
  text[n] = '\0';
  char *paren = strrchr(text, ')');
  return paren && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X';
}

static void print_holder_log(const char *log) {
  if (!log) return;
  char text[ERR_LEN];
  int fd = open(log, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return;
  text[n] = '\0';
  while (n > 0 && text[n - 1] == '\n') text[--n] = '\0';
  char *last = strrchr(text, '\n');
  fprintf(stderr, "%s\n", last ? last + 1 : text);
}

/* Undoes the octal escapes (\040 for a space, ...) of a mountinfo field, in place. */
static void unescape_mount_field(char *field) {
  char *out = field;
  for (char *in = field; *in; in++) {
    if (in[0] == '\\' && in[1] >= '0' && in[1] <= '7' && in[2] >= '0' && in[2] <= '7' && in[3] >= '0' &&
        in[3] <= '7') {
      *out++ = (char)((in[1] - '0') * 64 + (in[2] - '0') * 8 + (in[3] - '0'));
      in += 3;
    } else {
      *out++ = *in;
    }
  }
  *out = '\0';
}

/* How many mounts the mount table of `pid` (0: this process) has at `target`. */
static int mounts_at(pid_t pid, const char *target) {
  char path[64];
  if (pid > 0) snprintf(path, sizeof path, "/proc/%d/mountinfo", (int)pid);
  else snprintf(path, sizeof path, "/proc/self/mountinfo");
  FILE *table = fopen(path, "re");
  if (!table) return 0;
  char *line = NULL;
  size_t size = 0;
  int found = 0;
  while (getline(&line, &size, table) > 0) {
    /* id parent major:minor root mount-point ... */
    char *save = NULL;
    char *field = strtok_r(line, " ", &save);
    for (int i = 0; field && i < 4; i++) field = strtok_r(NULL, " ", &save);
    if (!field) continue;
    unescape_mount_field(field);
    if (strcmp(field, target) == 0) found++;
  }
  free(line);
  fclose(table);
  return found;
}

/* Waits until the holder has the branch mounted at the target: its mount table then has one mount more
 * there than ours. (The mount itself may be unreachable from here: a FUSE mount only serves processes
 * inside its user namespace.) */
static int wait_for_holder(const struct branch_spec *spec) {
  int here = mounts_at(0, spec->target);
  for (int waited = 0; waited < 10000; waited++) {
    if (mounts_at(spec->join, spec->target) > here) return 0;
    if (!process_alive(spec->join)) {
      print_holder_log(spec->holder_log);
      return fail("the process holding the branch's mount (pid %d) has exited", (int)spec->join);
    }
    sleep_ms(1);
  }
  return fail("the branch was not mounted by pid %d within 10 s", (int)spec->join);
}

/* Enters the holder's user and mount namespaces, where the branch is mounted. */
static int join_namespaces(const struct branch_spec *spec) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/ns/user", (int)spec->join);
  int user = open(path, O_RDONLY | O_CLOEXEC);
  if (user < 0) return fail("open %s: %s", path, strerror(errno));
  snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)spec->join);
  int mnt = open(path, O_RDONLY | O_CLOEXEC);
  if (mnt < 0) return fail("open %s: %s", path, strerror(errno));
  if (setns(user, CLONE_NEWUSER) != 0) return fail("join the branch's user namespace: %s", strerror(errno));
  if (setns(mnt, CLONE_NEWNS) != 0) return fail("join the branch's mount namespace: %s", strerror(errno));
  close(user);
  close(mnt);
  return 0;
}

/* Every step of mount-exec up to the command. Returns -1 with `failure` set when a step fails. */
static int prepare_branch(const struct branch_spec *spec, pid_t *daemon) {
  *daemon = 0;
  if (spec->join > 0) {
    if (wait_for_holder(spec) != 0) return -1;
    if (join_namespaces(spec) != 0) return -1;
  } else {
    if (enter_namespaces() != 0) return -1;
    if (make_mounts_private() != 0) return -1;
    if (mount_branch(spec, daemon) != 0) return -1;
  }
  /* Later: pid/net/ipc/uts namespaces, a fresh /proc, read-only remounts, Landlock, seccomp. */
  if (enter_cwd(spec) != 0) return -1;
  return 0;
}

static enum mount_mode parse_mode(const char *text) {
  if (strcmp(text, "overlay") == 0) return MODE_OVERLAY;
  if (strcmp(text, "fuse-overlayfs") == 0) return MODE_FUSE;
  if (strcmp(text, "bind") == 0) return MODE_BIND;
  usage("unknown --mode %s (overlay, fuse-overlayfs or bind)", text);
}

/* Options shared by mount-exec and hold; returns the index of the first argument after `--` (or argc). */
static int parse_spec(const char *name, int argc, char **argv, struct branch_spec *spec) {
  memset(spec, 0, sizeof *spec);
  const char *mode = NULL;
  int i = 0;
  for (; i < argc; i++) {
    const char *arg = argv[i];
    if (strcmp(arg, "--") == 0) {
      i++;
      break;
    }
    if (i + 1 >= argc) usage("%s: %s needs a value", name, arg);
    const char *value = argv[++i];
    if (strcmp(arg, "--lower") == 0) spec->lower = value;
    else if (strcmp(arg, "--upper") == 0) spec->upper = value;
    else if (strcmp(arg, "--work") == 0) spec->work = value;
    else if (strcmp(arg, "--target") == 0) spec->target = value;
    else if (strcmp(arg, "--mode") == 0) mode = value;
    else if (strcmp(arg, "--cwd") == 0) spec->cwd = value;
    else if (strcmp(arg, "--holder-log") == 0) spec->holder_log = value;
    else if (strcmp(arg, "--join") == 0) {
      char *end;
      long pid = strtol(value, &end, 10);
      if (*end != '\0' || pid <= 0 || pid > INT_MAX) usage("%s: --join needs a process id", name);
      spec->join = (pid_t)pid;
    } else usage("%s: unknown option %s", name, arg);
  }
  if (!spec->target) usage("%s: --target is required", name);
  if (spec->target[0] != '/') usage("%s: --target must be an absolute path", name);
  if (spec->join > 0) return i;
  if (!mode) usage("%s: --mode is required", name);
  spec->mode = parse_mode(mode);
  if (!spec->lower) usage("%s: --lower is required", name);
  if (spec->mode != MODE_BIND && (!spec->upper || !spec->work))
    usage("%s: --upper and --work are required for --mode %s", name, mode);
  return i;
}

static int cmd_mount_exec(int argc, char **argv) {
  struct branch_spec spec;
  int i = parse_spec("mount-exec", argc, argv, &spec);
  if (i >= argc) usage("mount-exec: no command after --");
  spec.argv = argv + i;
  pid_t daemon = 0;
  if (prepare_branch(&spec, &daemon) != 0) {
    if (daemon > 0) {
      kill(daemon, SIGTERM);
      waitpid(daemon, NULL, 0);
    }
    die_setup();
  }
  if (daemon > 0) supervise_command(&spec, daemon);
  exec_command(spec.argv);
}

/* ---------- hold: keep one mount of a branch for many processes ---------- */

static void interrupt(int sig) {
  (void)sig;
}

/* Mounts the branch in new namespaces and keeps them until stdin closes (the owner exited) or a
 * SIGTERM/SIGINT/SIGHUP arrives; processes started with `mount-exec --join PID` share this one mount, so
 * that they all see each other's writes. */
static int cmd_hold(int argc, char **argv) {
  struct branch_spec spec;
  int i = parse_spec("hold", argc, argv, &spec);
  if (i < argc || spec.join > 0) usage("hold: takes no command and no --join");
  if (spec.mode == MODE_BIND) usage("hold: --mode must be overlay or fuse-overlayfs");
  static const int stops[] = {SIGTERM, SIGINT, SIGHUP};
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = interrupt;
  sigemptyset(&sa.sa_mask);
  for (size_t k = 0; k < sizeof stops / sizeof stops[0]; k++) sigaction(stops[k], &sa, NULL);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  pid_t daemon = 0;
  if (enter_namespaces() != 0 || make_mounts_private() != 0 || mount_branch(&spec, &daemon) != 0) {
    if (daemon > 0) {
      kill(daemon, SIGTERM);
      waitpid(daemon, NULL, 0);
    }
    die_setup();
  }
  if (chdir("/") != 0) {
    /* nothing is pinned by the working directory either way */
  }
  char buf[64];
  for (;;) {
    ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
    if (n > 0) continue;
    break; /* end of input, an error, or a signal */
  }
  umount2(spec.target, MNT_DETACH);
  if (daemon > 0) {
    kill(daemon, SIGTERM);
    waitpid(daemon, NULL, 0);
  }
  return 0;
}

/* ---------- opaque ---------- */

static int is_opaque(const char *dir) {
  static const char *names[] = {"user.overlay.opaque", "trusted.overlay.opaque", "user.fuseoverlayfs.opaque"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char value[8];
    ssize_t n = lgetxattr(dir, names[i], value, sizeof value);
    if (n == 1 && value[0] == 'y') return 1;
  }
  return 0;
}

static int cmd_opaque(int argc, char **argv) {
  if (argc == 0) usage("opaque: no directory given");
  for (int i = 0; i < argc; i++)
    if (is_opaque(argv[i])) printf("%s\n", argv[i]);
  return fflush(stdout) == 0 ? 0 : 1;
}

/* ---------- probe ---------- */

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  (void)st;
  (void)ftw;
  if (type == FTW_DP) rmdir(path);
  else unlink(path);
  return 0;
}

static int unlock_dir(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  (void)ftw;
  if (type == FTW_D && (st->st_mode & 0700) != 0700) chmod(path, 0700);
  return 0;
}

static void remove_tree(const char *root) {
  nftw(root, unlock_dir, 16, FTW_PHYS);
  nftw(root, remove_entry, 16, FTW_PHYS | FTW_DEPTH);
}

static int make_dir(const char *base, const char *name, char *out, size_t size) {
  if (join_path(out, size, base, name) != 0) return -1;
  if (mkdir(out, 0700) != 0) return fail("mkdir %s: %s", out, strerror(errno));
  return 0;
}

static int write_small(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return fail("create %s: %s", path, strerror(errno));
  ssize_t n = write(fd, text, strlen(text));
  close(fd);
  return n == (ssize_t)strlen(text) ? 0 : fail("write %s failed", path);
}

static int exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

/* In a child: mount the probe branch, write through it, check where the write landed. The layers are
 * opened before the mount, which may cover them. */
static int probe_in_child(struct branch_spec *spec, const char *landing, const char *untouched) {
  int landing_fd = open_dir("layer", landing);
  int untouched_fd = untouched ? open_dir("lower", untouched) : -1;
  if (landing_fd < 0 || (untouched && untouched_fd < 0)) return -1;
  pid_t daemon = 0;
  int rc = prepare_branch(spec, &daemon);
  if (rc == 0) {
    char path[PATH_MAX];
    struct stat st;
    rc = join_path(path, sizeof path, spec->target, "seen");
    if (rc == 0 && !exists(path)) rc = fail("the branch does not show the lower files");
    if (rc == 0) rc = join_path(path, sizeof path, spec->target, "written");
    if (rc == 0) rc = write_small(path, "w");
    if (rc == 0 && fstatat(landing_fd, "written", &st, AT_SYMLINK_NOFOLLOW) != 0)
      rc = fail("a write did not reach the branch's layer");
    if (rc == 0 && untouched_fd >= 0 && fstatat(untouched_fd, "written", &st, AT_SYMLINK_NOFOLLOW) == 0)
      rc = fail("a write reached the lower folder");
  }
  if (daemon > 0) {
    umount2(spec->target, MNT_DETACH);
    kill(daemon, SIGTERM);
    waitpid(daemon, NULL, 0);
  }
  return rc;
}

static void probe_mode(const char *name, const char *base, enum mount_mode mode) {
  char dir[PATH_MAX], lower[PATH_MAX], upper[PATH_MAX], work[PATH_MAX], target[PATH_MAX], seen[PATH_MAX];
  if (join_path(dir, sizeof dir, base, "umbra-probe-XXXXXX") != 0 || !mkdtemp(dir)) {
    printf("%s fail cannot create a temporary folder in %s: %s\n", name, base, strerror(errno));
    return;
  }
  int ok = make_dir(dir, "lower", lower, sizeof lower) == 0 && make_dir(dir, "upper", upper, sizeof upper) == 0 &&
           make_dir(dir, "work", work, sizeof work) == 0 && make_dir(dir, "target", target, sizeof target) == 0 &&
           join_path(seen, sizeof seen, lower, "seen") == 0 && write_small(seen, "s") == 0;
  if (!ok) {
    printf("%s fail %s\n", name, failure);
    remove_tree(dir);
    return;
  }
  struct branch_spec spec;
  memset(&spec, 0, sizeof spec);
  spec.mode = mode;
  spec.lower = lower;
  spec.upper = upper;
  spec.work = work;
  /* Overlays are mounted over the lower folder itself, as for a real workspace; a bind mounts the copy
   * (here: lower) over a separate target. */
  spec.target = mode == MODE_BIND ? target : lower;
  const char *landing = mode == MODE_BIND ? lower : upper;
  const char *untouched = mode == MODE_BIND ? NULL : lower;
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    printf("%s fail pipe: %s\n", name, strerror(errno));
    remove_tree(dir);
    return;
  }
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    close(report[0]);
    int rc = probe_in_child(&spec, landing, untouched);
    if (rc != 0) {
      ssize_t n = write(report[1], failure, strlen(failure));
      (void)n;
    }
    _exit(rc == 0 ? 0 : 1);
  }
  close(report[1]);
  char reason[ERR_LEN] = "";
  ssize_t n = pid > 0 ? read(report[0], reason, sizeof reason - 1) : -1;
  reason[n > 0 ? n : 0] = '\0';
  close(report[0]);
  int status = 1;
  if (pid > 0) waitpid(pid, &status, 0);
  if (pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) printf("%s ok\n", name);
  else printf("%s fail %s\n", name, reason[0] ? reason : pid < 0 ? "fork failed" : "the probe crashed");
  remove_tree(dir);
}

static void probe_reflink(const char *base) {
  char dir[PATH_MAX], src[PATH_MAX], dst[PATH_MAX];
  if (join_path(dir, sizeof dir, base, "umbra-probe-XXXXXX") != 0 || !mkdtemp(dir)) {
    printf("reflink fail cannot create a temporary folder in %s: %s\n", base, strerror(errno));
    return;
  }
  if (join_path(src, sizeof src, dir, "src") != 0 || join_path(dst, sizeof dst, dir, "dst") != 0 ||
      write_small(src, "reflink probe") != 0) {
    printf("reflink fail %s\n", failure);
    remove_tree(dir);
    return;
  }
  int in = open(src, O_RDONLY | O_CLOEXEC);
  int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (in >= 0 && out >= 0 && ioctl(out, FICLONE, in) == 0) printf("reflink ok\n");
  else printf("reflink fail %s\n", strerror(errno));
  if (in >= 0) close(in);
  if (out >= 0) close(out);
  remove_tree(dir);
}

static int cmd_probe(int argc, char **argv) {
  const char *base = "/tmp";
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) base = argv[++i];
    else usage("probe: unknown argument %s", argv[i]);
  }
  probe_mode("overlay", base, MODE_OVERLAY);
  probe_mode("fuse-overlayfs", base, MODE_FUSE);
  probe_mode("bind", base, MODE_BIND);
  probe_reflink(base);
  return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc < 2) usage("no subcommand");
  const char *command = argv[1];
  if (strcmp(command, "mount-exec") == 0) return cmd_mount_exec(argc - 2, argv + 2);
  if (strcmp(command, "opaque") == 0) return cmd_opaque(argc - 2, argv + 2);
  if (strcmp(command, "probe") == 0) return cmd_probe(argc - 2, argv + 2);
  if (strcmp(command, "hold") == 0) return cmd_hold(argc - 2, argv + 2);
  if (strcmp(command, "sandbox") == 0) return cmd_sandbox(argc - 2, argv + 2);
  if (strcmp(command, "sandbox-probe") == 0) return cmd_sandbox_probe(argc - 2, argv + 2);
  usage("unknown subcommand %s", command);
}
