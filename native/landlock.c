/*
 * Landlock for umbra-helper sandbox: read anywhere, write only beneath the writable roots. The kernel's
 * ABI (1 to 7) decides which rights exist; the definitions are local so that older kernel headers build.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1

#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)    /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */

#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)               /* ABI 6 */

struct ll_ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct ll_path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

int landlock_abi(char *why, size_t why_size) {
  long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
  if (abi > 0) return (int)abi;
  if (errno == ENOSYS)
    snprintf(why, why_size, "Landlock is not built into this kernel (needs CONFIG_SECURITY_LANDLOCK=y, Linux 5.13+)");
  else if (errno == EOPNOTSUPP)
    snprintf(why, why_size,
             "Landlock is built in but not enabled: add landlock to the kernel's lsm= boot parameter "
             "(e.g. lsm=landlock,lockdown,yama,integrity,apparmor,bpf)");
  else snprintf(why, why_size, "Landlock is unavailable: %s", strerror(errno));
  return 0;
}

static uint64_t fs_rights(int abi) {
  uint64_t all = (LL_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0..12 */
  if (abi >= 2) all |= LL_FS_REFER;
  if (abi >= 3) all |= LL_FS_TRUNCATE;
  if (abi >= 5) all |= LL_FS_IOCTL_DEV;
  return all;
}

static int add_rule(int ruleset, const char *path, uint64_t access, char *why, size_t why_size) {
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return 0; /* nothing to allow */
    snprintf(why, why_size, "landlock: open %s: %s", path, strerror(errno));
    return -1;
  }
  struct ll_path_beneath_attr rule = {.allowed_access = access, .parent_fd = fd};
  /* A file (not a directory) may only carry the rights that apply to files: retried with those. */
  long rc = syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0);
  if (rc != 0 && errno == EINVAL) {
    rule.allowed_access &= LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV;
    rc = syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0);
  }
  int saved = errno;
  close(fd);
  if (rc != 0) {
    snprintf(why, why_size, "landlock: rule for %s: %s", path, strerror(saved));
    return -1;
  }
  return 0;
}

int landlock_apply(int abi, const struct landlock_paths *paths, char *why, size_t why_size) {
  uint64_t all = fs_rights(abi);
  struct ll_ruleset_attr attr = {.handled_access_fs = all, .handled_access_net = 0, .scoped = 0};
  /* No network rights are handled: without --network the sandbox's net namespace holds only its private
   * loopback, which commands may use freely. ABI 1-5 read only handled_access_fs here. */
  size_t size = sizeof(uint64_t);
  if (abi >= 6) {
    size = sizeof attr;
    attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
  }
  int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
  if (ruleset < 0) {
    snprintf(why, why_size, "landlock: create ruleset (ABI %d): %s", abi, strerror(errno));
    return -1;
  }
  uint64_t read = LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR;
  int rc = add_rule(ruleset, "/", read, why, why_size);
  for (size_t i = 0; rc == 0 && i < paths->writable_count; i++)
    rc = add_rule(ruleset, paths->writable[i], all, why, why_size);
  uint64_t device = read | LL_FS_WRITE_FILE | (abi >= 3 ? LL_FS_TRUNCATE : 0) | (abi >= 5 ? LL_FS_IOCTL_DEV : 0);
  for (size_t i = 0; rc == 0 && i < paths->device_count; i++)
    rc = add_rule(ruleset, paths->devices[i], device, why, why_size);
  if (rc == 0 && syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
    snprintf(why, why_size, "landlock: restrict self: %s", strerror(errno));
    rc = -1;
  }
  close(ruleset);
  return rc;
}
