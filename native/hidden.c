/*
 * Hidden paths of the sandbox: what a command may neither read nor list.
 *
 * The list comes through a descriptor (absolute paths, each ended by a NUL byte), so that its length and
 * the bytes of a name (a newline, say) never matter. It is hidden folder by folder, in the sandbox's
 * mount namespace, before the command starts:
 *
 *   - a folder with few hidden entries gets one mount per entry: an empty mode-000 stand-in (a file or a
 *     folder, as the entry is) bound read-only over it, and the folder stays as it was;
 *   - a folder with more hidden entries than other entries (a writable root: and more than 4,096 of
 *     them) is replaced by a tmpfs that holds only its other entries, each bound back from the real
 *     folder (a symlink copied): the hidden names are not there at all (ENOENT), whatever their number,
 *     and what is not hidden stays writable in place, with its own mounts (protected paths included).
 *     The tmpfs is then made read-only: the folder's own list of entries cannot change (no entry can be
 *     added, renamed or removed directly in it: EROFS).
 *
 * So a folder costs at most min(hidden, 1 + other entries) mounts (a writable root at most 4,096), and
 * nothing is written per hidden entry: the cost follows the visible tree, not the count of hidden files.
 * Neither way can the command undo it: a mount point cannot be renamed or unlinked (EBUSY), a read-only
 * tmpfs changes nothing (EROFS), and the command may not mount.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"
#include "sandbox.h"

#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#define OPEN_TREE_CLONE_FLAG 1
#define MOVE_MOUNT_F_EMPTY_PATH_FLAG 0x00000004
#define HIDE_ATTRS (0x1 | 0x2 | 0x4 | 0x8) /* read-only, nosuid, nodev, noexec */
/* Up to this many hidden entries in one folder, per-entry mounts are used without looking further; in a
 * writable root (the workspace, where commands add files all the time) up to ROOT_FEW, so that its own
 * list of entries stays writable unless that would cost thousands of mounts. */
#define FEW 8
#define ROOT_FEW 4096

struct mount_attr_args {
  uint64_t attr_set, attr_clr, propagation, userns_fd;
};

static int by_folder(const void *a, const void *b);

/* Reads the NUL-ended paths from `fd` (to its end) into `out`, sorted by folder (see by_folder). */
int read_hidden(int fd, struct hidden_list *out) {
  char *buf;
  size_t len;
  if (read_to_end(fd, (size_t)1 << 30, "the list of hidden paths", &buf, &len) != 0) return -1;
  if (len > 0 && buf[len - 1] != '\0') return fail("the list of hidden paths does not end with a NUL byte");
  size_t count = 0;
  for (size_t i = 0; i < len; i++) count += buf[i] == '\0';
  out->items = calloc(count + 1, sizeof *out->items);
  if (!out->items) return fail("out of memory");
  out->count = 0;
  for (size_t i = 0; i < len; i += strlen(buf + i) + 1) {
    if (buf[i] != '/') return fail("a hidden path is not absolute");
    out->items[out->count++] = buf + i;
  }
  qsort(out->items, out->count, sizeof *out->items, by_folder);
  return 0;
}

/* Covers `path` with the empty mode-000 stand-in (a file or a folder, as `path` is). */
int hide_path(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return 0; /* nothing to hide */
  if (S_ISLNK(st.st_mode)) return 0;   /* the policy names real paths; a link itself holds no data */
  const char *cover = S_ISDIR(st.st_mode) ? STAND_IN_DIR : STAND_IN_FILE;
  if (mount(cover, path, NULL, MS_BIND | MS_REC, NULL) != 0)
    return fail("bind %s on %s: %s", cover, path, strerror(errno));
  struct mount_attr_args attr = {.attr_set = HIDE_ATTRS, .attr_clr = 0, .propagation = 0, .userns_fd = 0};
  if (syscall(SYS_mount_setattr, AT_FDCWD, path, AT_RECURSIVE, &attr, sizeof attr) != 0)
    return fail("mount_setattr %s: %s", path, strerror(errno));
  return 0;
}

/* Length of the folder part of `path` ("/a/b" -> 2, "/a" -> 0: the root). */
static size_t parent_len(const char *path) {
  return (size_t)(strrchr(path, '/') - path);
}

/* Orders by folder, then by name, so that each folder's entries are adjacent and a folder comes before
 * the folders below it. */
static int by_folder(const void *a, const void *b) {
  const char *x = *(const char *const *)a, *y = *(const char *const *)b;
  size_t m = parent_len(x), n = parent_len(y);
  int c = memcmp(x, y, m < n ? m : n);
  if (c != 0) return c;
  if (m != n) return m < n ? -1 : 1;
  return strcmp(x + m + 1, y + n + 1);
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Replaces `folder` with a read-only tmpfs holding its entries but `names` (sorted, `count` of them),
 * bound back from the real folder; returns 1 without doing anything when per-entry mounts cost fewer. */
static int mask_folder(const char *folder, const char **names, size_t count) {
  int real = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (real < 0) return 1;
  struct stat st;
  int listing = fstat(real, &st) == 0 ? dup(real) : -1;
  DIR *dir = listing >= 0 ? fdopendir(listing) : NULL;
  if (!dir) {
    if (listing >= 0) close(listing);
    close(real);
    return 1;
  }
  /* The entries that stay, and how many of them need a mount (all but symlinks). */
  size_t kept_cap = 64, kept_count = 0, mounts = 1;
  struct kept {
    char *name;
    int link;
    int folder;
  } *kept = malloc(kept_cap * sizeof *kept);
  struct dirent *d;
  int short_of_memory = !kept;
  while (!short_of_memory && (d = readdir(dir)) != NULL) {
    const char *name = d->d_name;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) continue;
    if (bsearch(&name, names, count, sizeof *names, by_name)) continue;
    if (kept_count == kept_cap) {
      struct kept *bigger = realloc(kept, (kept_cap *= 2) * sizeof *kept);
      if (!bigger) {
        short_of_memory = 1;
        break;
      }
      kept = bigger;
    }
    unsigned char type = d->d_type;
    struct stat entry;
    if (type == DT_UNKNOWN && fstatat(real, name, &entry, AT_SYMLINK_NOFOLLOW) == 0)
      type = S_ISLNK(entry.st_mode) ? DT_LNK : S_ISDIR(entry.st_mode) ? DT_DIR : DT_REG;
    struct kept *k = &kept[kept_count++];
    k->name = strdup(name);
    short_of_memory = !k->name;
    k->link = type == DT_LNK;
    k->folder = type == DT_DIR;
    mounts += !k->link;
    if (mounts >= count) break; /* per entry is cheaper: no need to read on */
  }
  closedir(dir);
  int rc = short_of_memory ? fail("out of memory") : 1;
  if (rc < 0 || mounts >= count) goto done;
  char options[64];
  snprintf(options, sizeof options, "mode=%o", (unsigned)(st.st_mode & 07777));
  if (mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, options) != 0) goto done; /* per entry */
  rc = 0;
  int shown = open(folder, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (shown < 0) rc = fail("open %s: %s", folder, strerror(errno));
  for (size_t i = 0; rc == 0 && i < kept_count; i++) {
    const char *name = kept[i].name;
    if (kept[i].link) {
      char target[PATH_MAX];
      ssize_t n = readlinkat(real, name, target, sizeof target - 1);
      if (n < 0) continue; /* gone meanwhile */
      target[n] = '\0';
      if (symlinkat(target, shown, name) != 0) rc = fail("copy the link %s/%s: %s", folder, name, strerror(errno));
      continue;
    }
    int made = kept[i].folder ? mkdirat(shown, name, 0) : -1;
    if (!kept[i].folder) {
      int fd = openat(shown, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
      made = fd < 0 ? -1 : close(fd);
    }
    int tree = made == 0 ? (int)syscall(SYS_open_tree, real, name, OPEN_TREE_CLONE_FLAG | O_CLOEXEC | AT_RECURSIVE |
                                                                          AT_SYMLINK_NOFOLLOW)
                         : -1;
    if (tree < 0 || syscall(SYS_move_mount, tree, "", shown, name, MOVE_MOUNT_F_EMPTY_PATH_FLAG) != 0)
      rc = fail("bind back %s/%s: %s", folder, name, strerror(errno));
    if (tree >= 0) close(tree);
  }
  if (shown >= 0) close(shown);
  struct mount_attr_args attr = {.attr_set = HIDE_ATTRS, .attr_clr = 0, .propagation = 0, .userns_fd = 0};
  if (rc == 0 && syscall(SYS_mount_setattr, AT_FDCWD, folder, 0, &attr, sizeof attr) != 0)
    rc = fail("mount_setattr %s: %s", folder, strerror(errno));
done:
  for (size_t i = 0; kept && i < kept_count; i++) free(kept[i].name);
  free(kept);
  close(real);
  return rc;
}

int hide_paths(const struct hidden_list *list, const char *const *roots, size_t root_count) {
  for (size_t start = 0, end; start < list->count; start = end) {
    const char *first = list->items[start];
    size_t n = parent_len(first);
    for (end = start + 1; end < list->count; end++) {
      const char *next = list->items[end];
      if (parent_len(next) != n || memcmp(next, first, n) != 0) break;
    }
    size_t count = end - start;
    int per_entry = 1;
    char folder[PATH_MAX];
    if (n >= sizeof folder) return fail("a hidden path is too long");
    memcpy(folder, first, n);
    folder[n] = '\0';
    size_t few = FEW;
    for (size_t r = 0; r < root_count; r++)
      if (strcmp(roots[r], folder) == 0) few = ROOT_FEW;
    if (count > few && n > 0) {
      const char **names = malloc(count * sizeof *names);
      if (!names) return fail("out of memory");
      for (size_t i = 0; i < count; i++) names[i] = list->items[start + i] + n + 1;
      per_entry = mask_folder(folder, names, count);
      free(names);
      if (per_entry < 0) return -1;
    }
    for (size_t i = start; per_entry && i < end; i++)
      if (hide_path(list->items[i]) != 0) return -1;
  }
  return 0;
}
