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
 *     them) gets one read-only overlay over it, whose top layer holds a whiteout for each hidden name
 *     (built in a tmpfs, dropped once mounted) and whose lower layer is the folder itself: the hidden
 *     names are gone (ENOENT), whatever their number. Its other entries are bound back from the real
 *     folder, so they stay writable in place (with their own mounts, protected paths included); the
 *     folder's own list of entries is read-only (no entry can be added, renamed or removed there).
 *
 * So a folder costs at most min(hidden, 1 + other entries) mounts (a writable root at most 4,096): the
 * cost follows the visible tree, not the count of hidden files. Neither way can the command undo it: a mount point cannot be renamed or
 * unlinked (EBUSY), a read-only overlay changes nothing (EROFS), and the command may not mount.
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
#include <sys/sysmacros.h>
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
#define MASKS "/dev/.umbra-masks"
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
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  if (!buf) return fail("out of memory");
  for (;;) {
    if (len == cap) {
      char *bigger = cap < (1u << 30) ? realloc(buf, cap * 2) : NULL;
      if (!bigger) return fail("the list of hidden paths is too large");
      buf = bigger;
      cap *= 2;
    }
    ssize_t n = read(fd, buf + len, cap - len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("read the hidden paths: %s", strerror(errno));
    if (n == 0) break;
    len += (size_t)n;
  }
  close(fd);
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

/* Hides the entries `names` (sorted, `count` of them) of `folder` with one overlay, or returns 1 when the
 * folder is better served by per-entry mounts (or the kernel will not stack another overlay there). */
static int mask_folder(const char *folder, const char **names, size_t count, size_t serial) {
  int real = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (real < 0) return 1;
  int listing = dup(real);
  DIR *dir = listing >= 0 ? fdopendir(listing) : NULL;
  if (!dir) {
    if (listing >= 0) close(listing);
    close(real);
    return 1;
  }
  /* The entries that stay: bound back from the real folder once the overlay covers it. */
  size_t kept_cap = 64, kept_count = 0;
  char **kept = malloc(kept_cap * sizeof *kept);
  struct dirent *d;
  while (kept && (d = readdir(dir)) != NULL) {
    const char *name = d->d_name;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) continue;
    if (bsearch(&name, names, count, sizeof *names, by_name)) continue;
    if (kept_count == kept_cap) {
      char **bigger = realloc(kept, (kept_cap *= 2) * sizeof *kept);
      if (!bigger) break;
      kept = bigger;
    }
    /* A plain symlink is shown by the overlay as it is (read-only, like the folder's list); everything
     * else is bound back. */
    if (d->d_type == DT_LNK) {
      struct statx sx;
      if (statx(real, name, AT_SYMLINK_NOFOLLOW, 0, &sx) == 0 && !(sx.stx_attributes & STATX_ATTR_MOUNT_ROOT)) continue;
    }
    kept[kept_count++] = strdup(name);
  }
  closedir(dir);
  int rc = 1;
  if (!kept || kept_count + 1 >= count) goto done;
  char mask[64], path[PATH_MAX], options[160];
  snprintf(mask, sizeof mask, MASKS "/%zu", serial);
  if (mkdir(mask, 0700) != 0) {
    rc = fail("mkdir %s: %s", mask, strerror(errno));
    goto done;
  }
  for (size_t i = 0; i < count; i++) {
    if ((size_t)snprintf(path, sizeof path, "%s/%s", mask, names[i]) >= sizeof path) continue;
    if (mknod(path, S_IFCHR, makedev(0, 0)) != 0 && errno != EEXIST) {
      rc = fail("whiteout %s: %s", path, strerror(errno));
      goto done;
    }
  }
  snprintf(options, sizeof options, "lowerdir=%s:/proc/self/fd/%d,userxattr", mask, real);
  if (mount("overlay", folder, "overlay", MS_RDONLY | MS_NOSUID | MS_NODEV, options) != 0) goto done; /* per entry */
  rc = 0;
  int shown = open(folder, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (shown < 0) rc = fail("open %s: %s", folder, strerror(errno));
  for (size_t i = 0; rc == 0 && i < kept_count; i++) {
    int tree = (int)syscall(SYS_open_tree, real, kept[i], OPEN_TREE_CLONE_FLAG | O_CLOEXEC | AT_RECURSIVE | AT_SYMLINK_NOFOLLOW);
    if (tree < 0) {
      rc = fail("open_tree %s/%s: %s", folder, kept[i], strerror(errno));
      break;
    }
    if (syscall(SYS_move_mount, tree, "", shown, kept[i], MOVE_MOUNT_F_EMPTY_PATH_FLAG) != 0)
      rc = fail("bind back %s/%s: %s", folder, kept[i], strerror(errno));
    close(tree);
  }
  if (shown >= 0) close(shown);
done:
  for (size_t i = 0; kept && i < kept_count; i++) free(kept[i]);
  free(kept);
  close(real);
  return rc;
}

int hide_paths(const struct hidden_list *list, const char *const *roots, size_t root_count) {
  if (list->count == 0) return 0;
  int masks = 0;
  size_t serial = 0;
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
      struct stat st;
      if (lstat(folder, &st) != 0) continue; /* inside something hidden already */
      if (!masks) {
        if (mkdir(MASKS, 0700) != 0 || mount("tmpfs", MASKS, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700") != 0)
          return fail("mount a tmpfs on %s: %s", MASKS, strerror(errno));
        masks = 1;
      }
      const char **names = malloc(count * sizeof *names);
      if (!names) return fail("out of memory");
      for (size_t i = 0; i < count; i++) names[i] = list->items[start + i] + n + 1;
      per_entry = mask_folder(folder, names, count, serial++);
      free(names);
      if (per_entry < 0) return -1;
    }
    for (size_t i = start; per_entry && i < end; i++)
      if (hide_path(list->items[i]) != 0) return -1;
  }
  /* The overlays hold their own copy of the tmpfs: this one can go. */
  if (masks && umount2(MASKS, MNT_DETACH) != 0) return fail("unmount %s: %s", MASKS, strerror(errno));
  if (masks) rmdir(MASKS);
  return 0;
}
