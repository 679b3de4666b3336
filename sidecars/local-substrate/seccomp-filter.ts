/**
 * The seccomp filter every local guest runs under (issue 12, item 8): a classic-BPF program, built
 * here byte by byte, that bubblewrap loads with `--seccomp FD` just before it execs the guest
 * command. It refuses — with EPERM, so a program sees an ordinary "not permitted" — the syscalls a
 * student's code or a trusted check never needs and that widen the kernel surface a guest can
 * reach: kernel modules, kexec, the kernel keyring, bpf, perf, ptrace and cross-process memory
 * access, handle-based opens, every mount API, namespace creation and entry (clone/unshare with a
 * namespace flag, setns), and clock, swap, reboot, quota and accounting administration.
 *
 * The architecture in seccomp_data is checked first: a syscall of another ABI (i386 via int 0x80,
 * the x32 numbers on x86_64) would otherwise bypass the number checks: a foreign architecture
 * kills the process, an x32 number is refused.
 * clone3 answers ENOSYS: its flags live in memory a filter cannot read, and libc then falls back
 * to clone, whose flags are checked. Everything else is allowed (a deny list: the guest is an
 * ordinary Linux userland, and the namespaces, no_new_privs and no capabilities remain the wall).
 */
import fs from "node:fs/promises";
import path from "node:path";

export type TSeccompArch = "x86_64" | "aarch64";

/** seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]. */
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const OFFSET_ARG0_LOW = 16;

export const AUDIT_ARCH = { x86_64: 0xc000003e, aarch64: 0xc00000b7 } as const satisfies Record<TSeccompArch, number>;
const X32_SYSCALL_BIT = 0x40000000;

export const SECCOMP_RET_KILL_PROCESS = 0x80000000;
export const SECCOMP_RET_ERRNO = 0x00050000;
export const SECCOMP_RET_ALLOW = 0x7fff0000;
export const EPERM = 1;
export const ENOSYS = 38;

/** CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME */
export const NAMESPACE_FLAGS =
  0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x00000080;

export type TDeniedSyscall =
  | "init_module"
  | "finit_module"
  | "delete_module"
  | "kexec_load"
  | "kexec_file_load"
  | "add_key"
  | "request_key"
  | "keyctl"
  | "bpf"
  | "perf_event_open"
  | "userfaultfd"
  | "ptrace"
  | "process_vm_readv"
  | "process_vm_writev"
  | "name_to_handle_at"
  | "open_by_handle_at"
  | "mount"
  | "umount2"
  | "pivot_root"
  | "open_tree"
  | "move_mount"
  | "fsopen"
  | "fsconfig"
  | "fsmount"
  | "fspick"
  | "mount_setattr"
  | "setns"
  | "swapon"
  | "swapoff"
  | "reboot"
  | "sethostname"
  | "setdomainname"
  | "acct"
  | "settimeofday"
  | "clock_settime"
  | "adjtimex"
  | "clock_adjtime"
  | "quotactl"
  | "lookup_dcookie"
  | "vhangup";

/** Syscall numbers per architecture (x86_64: arch/x86/entry/syscalls/syscall_64.tbl; aarch64: asm-generic/unistd.h). */
export const SYSCALL_NUMBERS: Record<TSeccompArch, Record<TDeniedSyscall | "clone" | "clone3" | "unshare", number>> = {
  x86_64: {
    init_module: 175,
    finit_module: 313,
    delete_module: 176,
    kexec_load: 246,
    kexec_file_load: 320,
    add_key: 248,
    request_key: 249,
    keyctl: 250,
    bpf: 321,
    perf_event_open: 298,
    userfaultfd: 323,
    ptrace: 101,
    process_vm_readv: 310,
    process_vm_writev: 311,
    name_to_handle_at: 303,
    open_by_handle_at: 304,
    mount: 165,
    umount2: 166,
    pivot_root: 155,
    open_tree: 428,
    move_mount: 429,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    mount_setattr: 442,
    setns: 308,
    swapon: 167,
    swapoff: 168,
    reboot: 169,
    sethostname: 170,
    setdomainname: 171,
    acct: 163,
    settimeofday: 164,
    clock_settime: 227,
    adjtimex: 159,
    clock_adjtime: 305,
    quotactl: 179,
    lookup_dcookie: 212,
    vhangup: 153,
    clone: 56,
    clone3: 435,
    unshare: 272,
  },
  aarch64: {
    init_module: 105,
    finit_module: 273,
    delete_module: 106,
    kexec_load: 104,
    kexec_file_load: 294,
    add_key: 217,
    request_key: 218,
    keyctl: 219,
    bpf: 280,
    perf_event_open: 241,
    userfaultfd: 282,
    ptrace: 117,
    process_vm_readv: 270,
    process_vm_writev: 271,
    name_to_handle_at: 264,
    open_by_handle_at: 265,
    mount: 40,
    umount2: 39,
    pivot_root: 41,
    open_tree: 428,
    move_mount: 429,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    mount_setattr: 442,
    setns: 268,
    swapon: 224,
    swapoff: 225,
    reboot: 142,
    sethostname: 161,
    setdomainname: 162,
    acct: 89,
    settimeofday: 170,
    clock_settime: 112,
    adjtimex: 171,
    clock_adjtime: 266,
    quotactl: 60,
    lookup_dcookie: 18,
    vhangup: 58,
    clone: 220,
    clone3: 435,
    unshare: 97,
  },
};

export const DENIED_SYSCALLS = Object.keys(SYSCALL_NUMBERS.x86_64).filter(
  (name) => !["clone", "clone3", "unshare"].includes(name),
) as TDeniedSyscall[];

// Classic BPF opcodes (linux/filter.h).
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;

type TInsn = { code: number; k: number; jt?: string; jf?: string; label?: string };

/** Lays out the instructions and resolves label jumps to the relative offsets classic BPF uses. */
function assemble(program: TInsn[]): Buffer {
  const at = new Map<string, number>();
  program.forEach((insn, index) => insn.label && at.set(insn.label, index));
  const out = Buffer.alloc(program.length * 8);
  program.forEach((insn, index) => {
    const offset = (label: string | undefined): number => {
      if (label === undefined) return 0;
      const target = at.get(label);
      if (target === undefined || target <= index || target - index - 1 > 255)
        throw new Error(`seccomp filter: bad jump to ${label}`);
      return target - index - 1;
    };
    out.writeUInt16LE(insn.code, index * 8);
    out.writeUInt8(offset(insn.jt), index * 8 + 2);
    out.writeUInt8(offset(insn.jf), index * 8 + 3);
    out.writeUInt32LE(insn.k >>> 0, index * 8 + 4);
  });
  return out;
}

function archBlock(arch: TSeccompArch): TInsn[] {
  const n = SYSCALL_NUMBERS[arch];
  const block: TInsn[] = [{ label: `${arch}`, code: LD_W_ABS, k: OFFSET_NR }];
  // x32 numbers (and anything above) are refused outright: they would alias the checks below
  if (arch === "x86_64") block.push({ code: JGE_K, k: X32_SYSCALL_BIT, jt: "eperm" });
  for (const name of DENIED_SYSCALLS) block.push({ code: JEQ_K, k: n[name], jt: "eperm" });
  block.push({ code: JEQ_K, k: n.clone3, jt: "enosys" });
  block.push({ code: JEQ_K, k: n.clone, jt: "flags" });
  block.push({ code: JEQ_K, k: n.unshare, jt: "flags" });
  block.push({ code: RET_K, k: SECCOMP_RET_ALLOW });
  return block;
}

/** The filter for the given architectures (the host's first; both by default). */
export function buildSeccompFilter(arches: readonly TSeccompArch[] = ["x86_64", "aarch64"]): Buffer {
  const program: TInsn[] = [{ code: LD_W_ABS, k: OFFSET_ARCH }];
  for (const arch of arches) program.push({ code: JEQ_K, k: AUDIT_ARCH[arch], jt: arch });
  program.push({ code: RET_K, k: SECCOMP_RET_KILL_PROCESS, label: "foreign" });
  for (const arch of arches) program.push(...archBlock(arch));
  program.push(
    // clone/unshare: arg0 holds the flags on both architectures; any namespace flag is refused
    { label: "flags", code: LD_W_ABS, k: OFFSET_ARG0_LOW },
    { code: JSET_K, k: NAMESPACE_FLAGS, jt: "eperm" },
    { code: RET_K, k: SECCOMP_RET_ALLOW },
    { label: "eperm", code: RET_K, k: SECCOMP_RET_ERRNO | EPERM },
    { label: "enosys", code: RET_K, k: SECCOMP_RET_ERRNO | ENOSYS },
    { label: "kill", code: RET_K, k: SECCOMP_RET_KILL_PROCESS },
  );
  return assemble(program);
}

/** Writes the filter where the sandbox wrapper opens it as bwrap's `--seccomp` fd; returns the path. */
export async function writeSeccompFilterFile(dir: string): Promise<string> {
  const file = path.join(dir, "guest-seccomp.bpf");
  await fs.writeFile(`${file}.tmp`, buildSeccompFilter(), { mode: 0o644 });
  await fs.rename(`${file}.tmp`, file);
  return file;
}
