/*
 * Hidden paths of the sandbox: what a command may neither read nor list.
 *
 * The list comes through a descriptor as records, each ended by a NUL byte (no name can hold one), so
 * that neither its length nor the bytes of a name (a newline, say) matter. The first byte of a record
 * says what it is:
 *
 *   - 'h' then an absolute path: hidden on its own, by an empty mode-000 stand-in (a file or a folder, as
 *     the entry is) bound read-only over it;
 *   - 'm' then an absolute folder, followed by 'k' records (names): the folder is masked, every entry of
 *     it hidden but the kept ones. It is replaced by a tmpfs that holds only the kept entries, each bound
 *     back from the real folder (a symlink copied): the other names are not there at all (ENOENT),
 *     whatever their number, and a kept entry stays writable in place, with its own mounts. The tmpfs is
 *     then made read-only: the folder's own list of entries cannot change (EROFS).
 *
 * umbra chooses which folders are masked (src/sandbox/hidden-masks.ts): the list holds what stays
 * visible in a masked folder, never its hidden entries, so neither the list nor the work here follows
 * the number of hidden files. Masks come first, a folder before the folders below it; the single paths
 * after them. Neither way can the command undo it: a mount point cannot be renamed or unlinked (EBUSY),
 * a read-only tmpfs changes nothing (EROFS), and the command may not mount.
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

struct mount_attr_args {
  uint64_t attr_set, attr_clr, propagation, userns_fd;
};

static int bad_name(const char *name) {
  return name[0] == '\0' || strchr(name, '/') != NULL || strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

/* Reads the records from `fd` (to its end) into `out` (see the top of this file). */
int read_hidden(int fd, struct hidden_list *out) {
  char *buf;
  size_t len;
  if (read_to_end(fd, (size_t)1 << 30, "the list of hidden paths", &buf, &len) != 0) return -1;
  if (len > 0 && buf[len - 1] != '\0') return fail("the list of hidden paths does not end with a NUL byte");
  size_t records = 0, masks = 0;
  for (size_t i = 0; i < len; i += strlen(buf + i) + 1) {
    records++;
    masks += buf[i] == 'm';
  }
  memset(out, 0, sizeof *out);
  out->paths = calloc(records + 1, sizeof *out->paths);
  out->masks = calloc(masks + 1, sizeof *out->masks);
  out->names = calloc(records + 1, sizeof *out->names);
  if (!out->paths || !out->masks || !out->names) return fail("out of memory");
  size_t names = 0;
  for (size_t i = 0; i < len; i += strlen(buf + i) + 1) {
    char kind = buf[i];
    const char *value = buf + i + 1;
    if (kind == 'k') {
      if (out->mask_count == 0) return fail("a kept name comes before any masked folder");
      if (bad_name(value)) return fail("a kept name is not a plain name");
      out->names[names++] = value;
      out->masks[out->mask_count - 1].keep_count++;
      continue;
    }
    if ((kind != 'h' && kind != 'm') || value[0] != '/') return fail("a hidden path is not absolute");
    if (kind == 'h') {
      out->paths[out->count++] = value;
    } else {
      struct hidden_mask *m = &out->masks[out->mask_count++];
      m->folder = value;
      m->keep = out->names + names;
      m->keep_count = 0;
    }
  }
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

/* Binds the entry `name` of the real folder `real` back onto the same name in the tmpfs `shown`. */
static int bind_back(const char *folder, int real, int shown, const char *name) {
  struct stat st;
  if (fstatat(real, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return 0; /* gone meanwhile: nothing to show */
  if (S_ISLNK(st.st_mode)) {
    char target[PATH_MAX];
    ssize_t n = readlinkat(real, name, target, sizeof target - 1);
    if (n < 0) return 0;
    target[n] = '\0';
    if (symlinkat(target, shown, name) != 0) return fail("copy the link %s/%s: %s", folder, name, strerror(errno));
    return 0;
  }
  int made = -1;
  if (S_ISDIR(st.st_mode)) {
    made = mkdirat(shown, name, 0);
  } else {
    int fd = openat(shown, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
    made = fd < 0 ? -1 : close(fd);
  }
  int tree = made == 0 ? (int)syscall(SYS_open_tree, real, name, OPEN_TREE_CLONE_FLAG | O_CLOEXEC | AT_RECURSIVE |
                                                                        AT_SYMLINK_NOFOLLOW)
                       : -1;
  int rc = 0;
  if (tree < 0 || syscall(SYS_move_mount, tree, "", shown, name, MOVE_MOUNT_F_EMPTY_PATH_FLAG) != 0)
    rc = fail("bind back %s/%s: %s", folder, name, strerror(errno));
  if (tree >= 0) close(tree);
  return rc;
}

/* Replaces the folder of `m` with a read-only tmpfs holding only its kept entries, bound back. Nothing
 * when the folder is not there (or is a symlink now: a link itself holds no data). */
static int mask_folder(const struct hidden_mask *m) {
  const char *folder = m->folder;
  int real = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  struct stat st;
  if (real < 0) {
    if (lstat(folder, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
    return fail("open %s: %s", folder, strerror(errno));
  }
  int rc = 0;
  char options[64];
  if (fstat(real, &st) != 0) rc = fail("stat %s: %s", folder, strerror(errno));
  snprintf(options, sizeof options, "mode=%o", (unsigned)(st.st_mode & 07777));
  if (rc == 0 && mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, options) != 0)
    rc = fail("mask %s: %s", folder, strerror(errno));
  int shown = rc == 0 ? open(folder, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
  if (rc == 0 && shown < 0) rc = fail("open %s: %s", folder, strerror(errno));
  for (size_t i = 0; rc == 0 && i < m->keep_count; i++) rc = bind_back(folder, real, shown, m->keep[i]);
  if (shown >= 0) close(shown);
  struct mount_attr_args attr = {.attr_set = HIDE_ATTRS, .attr_clr = 0, .propagation = 0, .userns_fd = 0};
  if (rc == 0 && syscall(SYS_mount_setattr, AT_FDCWD, folder, 0, &attr, sizeof attr) != 0)
    rc = fail("mount_setattr %s: %s", folder, strerror(errno));
  close(real);
  return rc;
}

int hide_paths(const struct hidden_list *list) {
  for (size_t i = 0; i < list->mask_count; i++)
    if (mask_folder(&list->masks[i]) != 0) return -1;
  for (size_t i = 0; i < list->count; i++)
    if (hide_path(list->paths[i]) != 0) return -1;
  return 0;
}
