/**
 * The sandbox's seccomp filter, as classic BPF for `umbra-helper sandbox` (which installs it with a
 * user-notification listener, answers EPERM and reports each denied call). Denied: ptrace and
 * process_vm_*, io_uring, mount and the new mount API, pivot_root, chroot, unshare, setns, clone with
 * namespace flags, kexec, bpf, perf_event_open, keys, kernel modules, swap, reboot, userfaultfd,
 * open_by_handle_at, TIOCSTI/TIOCLINUX (whatever the upper 32 bits of the request), setuid/setgid bits
 * (chmod, fchmod, fchmodat, fchmodat2 with S_ISUID or S_ISGID in the mode, and open, openat, creat, mknod,
 * mknodat creating a file with them: a command cannot leave a setuid file for the user to run later;
 * mkdir ignores those bits), and without network
 * every socket but AF_UNIX, AF_INET and AF_INET6 (not raw or packet ones) and NETLINK_ROUTE: the
 * sandbox's own network namespace then holds only its private loopback, which these reach, and nothing
 * else (no AF_PACKET, AF_VSOCK, AF_ALG, other netlink protocols, ...). clone3 and openat2 fail with ENOSYS
 * (their flags and mode lie in a struct that seccomp cannot read; libc then falls back to clone and
 * openat). Other architectures and the x32 ABI kill the
 * process.
 */
import type { Denial } from "./types.js";

export type SeccompArch = "x64" | "arm64";

export interface SeccompOptions {
  network: boolean;
  arch?: SeccompArch;
}

interface ArchInfo {
  audit: number;
  /** Bit set in syscall numbers of the x32 ABI (x86-64 only). */
  x32Bit?: number;
  numbers: Record<string, number>;
}

const DENIED = [
  "ptrace",
  "process_vm_readv",
  "process_vm_writev",
  "io_uring_setup",
  "io_uring_enter",
  "io_uring_register",
  "mount",
  "umount2",
  "pivot_root",
  "chroot",
  "unshare",
  "setns",
  "open_tree",
  "move_mount",
  "fsopen",
  "fsconfig",
  "fsmount",
  "fspick",
  "mount_setattr",
  "kexec_load",
  "kexec_file_load",
  "bpf",
  "perf_event_open",
  "keyctl",
  "add_key",
  "request_key",
  "init_module",
  "finit_module",
  "delete_module",
  "swapon",
  "swapoff",
  "reboot",
  "acct",
  "userfaultfd",
  "open_by_handle_at",
] as const;

/** Calls added since Linux 5.1 have one number on every architecture. */
const UNIFIED_NUMBERS = {
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  open_tree: 428,
  move_mount: 429,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  clone3: 435,
  openat2: 437,
  mount_setattr: 442,
  fchmodat2: 452,
} as const;

const ARCHES: Record<SeccompArch, ArchInfo> = {
  x64: {
    audit: 0xc000003e,
    x32Bit: 0x40000000,
    numbers: {
      open: 2,
      ioctl: 16,
      creat: 85,
      chmod: 90,
      fchmod: 91,
      mknod: 133,
      openat: 257,
      mknodat: 259,
      fchmodat: 268,
      socket: 41,
      clone: 56,
      ptrace: 101,
      pivot_root: 155,
      chroot: 161,
      acct: 163,
      mount: 165,
      umount2: 166,
      swapon: 167,
      swapoff: 168,
      reboot: 169,
      init_module: 175,
      delete_module: 176,
      add_key: 248,
      request_key: 249,
      keyctl: 250,
      kexec_load: 246,
      unshare: 272,
      perf_event_open: 298,
      open_by_handle_at: 304,
      setns: 308,
      process_vm_readv: 310,
      process_vm_writev: 311,
      finit_module: 313,
      kexec_file_load: 320,
      bpf: 321,
      userfaultfd: 323,
      ...UNIFIED_NUMBERS,
    },
  },
  arm64: {
    audit: 0xc00000b7,
    numbers: {
      ioctl: 29,
      mknodat: 33,
      fchmod: 52,
      fchmodat: 53,
      openat: 56,
      umount2: 39,
      mount: 40,
      pivot_root: 41,
      chroot: 51,
      acct: 89,
      unshare: 97,
      kexec_load: 104,
      init_module: 105,
      delete_module: 106,
      ptrace: 117,
      reboot: 142,
      socket: 198,
      add_key: 217,
      request_key: 218,
      keyctl: 219,
      clone: 220,
      swapon: 224,
      swapoff: 225,
      perf_event_open: 241,
      open_by_handle_at: 265,
      setns: 268,
      process_vm_readv: 270,
      process_vm_writev: 271,
      finit_module: 273,
      bpf: 280,
      userfaultfd: 282,
      kexec_file_load: 294,
      ...UNIFIED_NUMBERS,
    },
  },
};

/** Namespace flags of clone(2): CLONE_NEWTIME, NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET. */
const CLONE_NAMESPACE_FLAGS: Record<string, number> = {
  CLONE_NEWTIME: 0x80,
  CLONE_NEWNS: 0x20000,
  CLONE_NEWCGROUP: 0x2000000,
  CLONE_NEWUTS: 0x4000000,
  CLONE_NEWIPC: 0x8000000,
  CLONE_NEWUSER: 0x10000000,
  CLONE_NEWPID: 0x20000000,
  CLONE_NEWNET: 0x40000000,
};
const CLONE_NAMESPACES = Object.values(CLONE_NAMESPACE_FLAGS).reduce((all, bit) => all | bit, 0) >>> 0;

const TIOCSTI = 0x5412;
const TIOCLINUX = 0x541c;
const AF_UNIX = 1;
const AF_INET = 2;
const AF_INET6 = 10;
const AF_NETLINK = 16;
const NETLINK_ROUTE = 0;
/** The socket type without SOCK_NONBLOCK / SOCK_CLOEXEC. */
const SOCK_TYPE_MASK = 0xf;
const SOCK_RAW = 3;
const SOCK_PACKET = 10;
const ENOSYS = 38;
const S_ISUID = 0o4000;
const S_ISGID = 0o2000;
/** open flags that make a file with the call's mode: O_CREAT, and __O_TMPFILE (of O_TMPFILE). */
const O_CREAT = 0o100;
const O_TMPFILE_BIT = 0o20000000;
/**
 * Calls that set a file's mode, by the argument that holds the mode; those taking open flags first check
 * the argument before it for O_CREAT. x86-64 only: open, creat, chmod, mknod (arm64 has only the *at ones).
 */
const MODE_ARG: Record<string, { mode: number; flags?: number }> = {
  chmod: { mode: 1 },
  fchmod: { mode: 1 },
  creat: { mode: 1 },
  mknod: { mode: 1 },
  fchmodat: { mode: 2 },
  fchmodat2: { mode: 2 },
  mknodat: { mode: 2 },
  open: { mode: 2, flags: 1 },
  openat: { mode: 3, flags: 2 },
};
/** The start of the detail of a refused setuid/setgid mode (see explain.ts). */
export const SETID_DETAIL = "setuid/setgid bits refused";

const ADDRESS_FAMILIES: Record<number, string> = {
  2: "AF_INET",
  10: "AF_INET6",
  16: "AF_NETLINK",
  17: "AF_PACKET",
  3: "AF_AX25",
  4: "AF_IPX",
  5: "AF_APPLETALK",
  38: "AF_ALG",
  40: "AF_VSOCK",
  44: "AF_XDP",
};

// Classic BPF opcodes and seccomp return values.
const LD_W_ABS = 0x20;
const AND_K = 0x54;
const JEQ_K = 0x15;
const JSET_K = 0x45;
const RET_K = 0x06;
const RET_KILL_PROCESS = 0x80000000;
const RET_USER_NOTIF = 0x7fc00000;
const RET_ERRNO = 0x00050000;
const RET_ALLOW = 0x7fff0000;

// Offsets in struct seccomp_data (little-endian: the low half of an argument comes first).
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const argLow = (index: number) => 16 + 8 * index;

type Target = number | string;
interface Insn {
  code: number;
  jt: Target;
  jf: Target;
  k: number;
  label?: string;
}

/** The architecture of this process as the filter names it; undefined when it has no filter. */
export function currentSeccompArch(): SeccompArch | undefined {
  if (process.arch === "x64") return "x64";
  if (process.arch === "arm64") return "arm64";
  return undefined;
}

function archInfo(arch: SeccompArch | undefined): ArchInfo {
  const info = arch ? ARCHES[arch] : undefined;
  if (!info) throw new Error(`no seccomp filter for the ${process.arch} architecture`);
  return info;
}

/** The filter as `struct sock_filter` records (8 bytes each, little-endian), ready for the helper. */
export function seccompProgram(options: SeccompOptions): Buffer {
  const info = archInfo(options.arch ?? currentSeccompArch());
  const nr = (name: string): number => {
    const value = info.numbers[name];
    if (value === undefined) throw new Error(`no number for ${name}`);
    return value;
  };
  const code: Insn[] = [];
  const ld = (offset: number) => code.push({ code: LD_W_ABS, jt: 0, jf: 0, k: offset });
  const jeq = (k: number, jt: Target, jf: Target = 0) => code.push({ code: JEQ_K, jt, jf, k: k >>> 0 });
  const jset = (k: number, jt: Target, jf: Target = 0) => code.push({ code: JSET_K, jt, jf, k: k >>> 0 });
  const and = (k: number) => code.push({ code: AND_K, jt: 0, jf: 0, k: k >>> 0 });
  const ret = (k: number, label?: string) =>
    code.push({ code: RET_K, jt: 0, jf: 0, k: k >>> 0, ...(label ? { label } : {}) });
  const label = (name: string) => {
    const next = code.length;
    labels.set(name, next);
  };
  const labels = new Map<string, number>();

  ld(OFFSET_ARCH);
  jeq(info.audit, 0, "kill");
  ld(OFFSET_NR);
  if (info.x32Bit !== undefined) jset(info.x32Bit, "kill");
  for (const name of DENIED) jeq(nr(name), "notify");
  jeq(nr("clone"), "clone");
  jeq(nr("clone3"), "enosys");
  jeq(nr("openat2"), "enosys");
  const modeCalls = Object.entries(MODE_ARG).filter(([name]) => info.numbers[name] !== undefined);
  for (const [name] of modeCalls) jeq(nr(name), `mode:${name}`);
  jeq(nr("ioctl"), "ioctl");
  if (!options.network) jeq(nr("socket"), "socket");
  ret(RET_ALLOW);
  label("clone");
  ld(argLow(0));
  jset(CLONE_NAMESPACES, "notify");
  ret(RET_ALLOW);
  label("ioctl");
  // The kernel takes the request as a 32-bit number: only the low half of the argument counts.
  ld(argLow(1));
  jeq(TIOCSTI, "notify");
  jeq(TIOCLINUX, "notify");
  ret(RET_ALLOW);
  if (!options.network) {
    // The kernel takes domain, type and protocol as ints: the low halves count.
    label("socket");
    ld(argLow(0));
    jeq(AF_UNIX, "allow");
    jeq(AF_NETLINK, "netlink");
    jeq(AF_INET, "inet");
    jeq(AF_INET6, "inet", "notify");
    label("inet");
    ld(argLow(1));
    and(SOCK_TYPE_MASK);
    jeq(SOCK_RAW, "notify");
    jeq(SOCK_PACKET, "notify", "allow");
    label("netlink");
    ld(argLow(2));
    jeq(NETLINK_ROUTE, "allow", "notify");
  }
  for (const [name, { mode, flags }] of modeCalls) {
    label(`mode:${name}`);
    if (flags !== undefined) {
      ld(argLow(flags));
      jset(O_CREAT | O_TMPFILE_BIT, 0, "allow");
    }
    ld(argLow(mode));
    jset(S_ISUID | S_ISGID, "notify", "allow");
  }
  label("notify");
  ret(RET_USER_NOTIF);
  label("kill");
  ret(RET_KILL_PROCESS);
  label("enosys");
  ret(RET_ERRNO | ENOSYS);
  label("allow");
  ret(RET_ALLOW);

  const out = Buffer.alloc(code.length * 8);
  code.forEach((insn, index) => {
    const offset = (target: Target): number => {
      if (typeof target === "number") return target;
      const at = labels.get(target);
      if (at === undefined) throw new Error(`seccomp: no label ${target}`);
      const jump = at - index - 1;
      if (jump < 0 || jump > 255) throw new Error(`seccomp: jump to ${target} out of range`);
      return jump;
    };
    out.writeUInt16LE(insn.code, index * 8);
    out.writeUInt8(offset(insn.jt), index * 8 + 2);
    out.writeUInt8(offset(insn.jf), index * 8 + 3);
    out.writeUInt32LE(insn.k, index * 8 + 4);
  });
  return out;
}

/** The name of system call `nr` among those the filter knows, else `syscall <nr>`. */
export function syscallName(nr: number, arch: SeccompArch | undefined = currentSeccompArch()): string {
  const numbers = arch ? ARCHES[arch].numbers : {};
  for (const [name, value] of Object.entries(numbers)) if (value === nr) return name;
  return `syscall ${nr}`;
}

function hex(value: bigint): string {
  return `0x${value.toString(16)}`;
}

/** A denial reported by the helper ("seccomp NR A0 ... A5"), described for people and the explainer. */
export function describeSeccompDenial(
  nr: number,
  args: readonly bigint[],
  arch: SeccompArch | undefined = currentSeccompArch(),
): Denial {
  const name = syscallName(nr, arch);
  const arg = (index: number): bigint => args[index] ?? 0n;
  const low = (index: number): number => Number(arg(index) & 0xffffffffn);
  if (name === "socket") {
    const family = low(0);
    const familyName = ADDRESS_FAMILIES[family] ?? `address family ${family}`;
    const type = low(1) & SOCK_TYPE_MASK;
    const typeName = type === SOCK_RAW ? "SOCK_RAW" : type === SOCK_PACKET ? "SOCK_PACKET" : `type ${type}`;
    let what = familyName;
    if (family === AF_INET || family === AF_INET6) what += `, ${typeName}`;
    else if (family === AF_NETLINK) what += `, protocol ${low(2)}`;
    return {
      kind: "network",
      syscall: name,
      detail: `socket(${what}) refused: only the sandbox's private loopback is reachable, through ordinary AF_INET, AF_INET6 and AF_UNIX sockets`,
    };
  }
  if (name === "clone") {
    const flags = Object.entries(CLONE_NAMESPACE_FLAGS)
      .filter(([, bit]) => (low(0) & bit) !== 0)
      .map(([flag]) => flag);
    return { kind: "seccomp", syscall: name, detail: `clone with ${flags.join("|")} (new namespaces)` };
  }
  const modeArg = MODE_ARG[name];
  if (modeArg) {
    const mode = low(modeArg.mode) & 0o7777;
    return {
      kind: "seccomp",
      syscall: name,
      detail: `${SETID_DETAIL}: ${name} with mode 0${mode.toString(8)} (the sandbox makes no setuid or setgid files)`,
    };
  }
  if (name === "ioctl") {
    const request = low(1);
    const which =
      request === TIOCSTI ? "TIOCSTI" : request === TIOCLINUX ? "TIOCLINUX" : hex(BigInt(request));
    return { kind: "seccomp", syscall: name, detail: `ioctl ${which} (terminal input injection)` };
  }
  return { kind: "seccomp", syscall: name, detail: `${name} is not allowed in the sandbox` };
}
