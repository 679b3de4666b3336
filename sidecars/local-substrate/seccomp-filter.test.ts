/**
 * The seccomp program itself, run through a small classic-BPF interpreter written here (the
 * kernel's semantics for the opcodes the filter uses): every listed syscall is EPERM on both
 * architectures, clone/unshare only with a namespace flag, clone3 is ENOSYS, ordinary syscalls are
 * allowed, x32 numbers are refused and a foreign architecture is killed.
 */
import { describe, expect, it } from "vitest";
import {
  AUDIT_ARCH,
  buildSeccompFilter,
  DENIED_SYSCALLS,
  ENOSYS,
  EPERM,
  SECCOMP_RET_ALLOW,
  SECCOMP_RET_ERRNO,
  SECCOMP_RET_KILL_PROCESS,
  SYSCALL_NUMBERS,
  type TSeccompArch,
} from "./seccomp-filter";

/** seccomp_data as the kernel lays it out (little-endian). */
function seccompData(arch: number, nr: number, args: number[] = []): Buffer {
  const data = Buffer.alloc(64);
  data.writeInt32LE(nr, 0);
  data.writeUInt32LE(arch >>> 0, 4);
  args.forEach((value, i) => data.writeUInt32LE(value >>> 0, 16 + 8 * i));
  return data;
}

/** A classic-BPF interpreter for the instructions a seccomp filter may use. */
function runFilter(program: Buffer, data: Buffer): number {
  let a = 0;
  let pc = 0;
  const count = program.length / 8;
  for (let steps = 0; steps < 4096 && pc < count; steps++) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    switch (code) {
      case 0x20: // ld w abs
        if (k % 4 !== 0 || k + 4 > data.length) throw new Error(`bad load at ${k}`);
        a = data.readUInt32LE(k);
        pc += 1;
        break;
      case 0x15: // jeq k
        pc += 1 + (a === k ? jt : jf);
        break;
      case 0x35: // jge k
        pc += 1 + (a >= k ? jt : jf);
        break;
      case 0x45: // jset k
        pc += 1 + ((a & k) >>> 0 !== 0 ? jt : jf);
        break;
      case 0x06: // ret k
        return k;
      default:
        throw new Error(`opcode 0x${code.toString(16)} is not expected in the filter`);
    }
  }
  throw new Error("the filter ran off its end");
}

const filter = buildSeccompFilter();
const ARCHES: TSeccompArch[] = ["x86_64", "aarch64"];
const CLONE_NEWUSER = 0x10000000;
const CLONE_NEWNS = 0x00020000;
const CLONE_NEWNET = 0x40000000;
/** fork-like clone flags of glibc (CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD) and of a thread. */
const FORK_FLAGS = 0x01200011;
const THREAD_FLAGS = 0x003d0f00;

describe.each(ARCHES)("seccomp filter on %s", (arch) => {
  const numbers = SYSCALL_NUMBERS[arch];
  const run = (nr: number, args: number[] = []) => runFilter(filter, seccompData(AUDIT_ARCH[arch], nr, args));

  it.each(DENIED_SYSCALLS)("refuses %s with EPERM", (name) => {
    expect(run(numbers[name])).toBe(SECCOMP_RET_ERRNO | EPERM);
  });

  it("refuses clone and unshare with any namespace flag, and allows them without", () => {
    for (const flag of [
      CLONE_NEWUSER,
      CLONE_NEWNS,
      CLONE_NEWNET,
      0x80,
      0x02000000,
      0x04000000,
      0x08000000,
      0x20000000,
    ]) {
      expect(run(numbers.unshare, [flag])).toBe(SECCOMP_RET_ERRNO | EPERM);
      expect(run(numbers.clone, [FORK_FLAGS | flag])).toBe(SECCOMP_RET_ERRNO | EPERM);
    }
    expect(run(numbers.clone, [FORK_FLAGS])).toBe(SECCOMP_RET_ALLOW);
    expect(run(numbers.clone, [THREAD_FLAGS])).toBe(SECCOMP_RET_ALLOW);
    expect(run(numbers.unshare, [0x00000400 /* CLONE_FILES */])).toBe(SECCOMP_RET_ALLOW);
  });

  it("answers clone3 with ENOSYS, so libc falls back to the inspectable clone", () => {
    expect(run(numbers.clone3)).toBe(SECCOMP_RET_ERRNO | ENOSYS);
  });

  it("allows what a guest needs (read, write, openat, execve, exit_group, getpid)", () => {
    const ordinary = arch === "x86_64" ? [0, 1, 257, 59, 231, 39, 61] : [63, 64, 56, 221, 94, 172, 260];
    for (const nr of ordinary) expect(run(nr)).toBe(SECCOMP_RET_ALLOW);
  });
});

describe("seccomp filter architecture checks", () => {
  it("refuses x32 syscall numbers on x86_64", () => {
    expect(runFilter(filter, seccompData(AUDIT_ARCH.x86_64, 0x40000000 | SYSCALL_NUMBERS.x86_64.mount))).toBe(
      SECCOMP_RET_ERRNO | EPERM,
    );
    expect(runFilter(filter, seccompData(AUDIT_ARCH.x86_64, 0x40000000))).toBe(SECCOMP_RET_ERRNO | EPERM);
  });

  it("kills a syscall made through another ABI (i386 int 0x80)", () => {
    const AUDIT_ARCH_I386 = 0x40000003;
    expect(runFilter(filter, seccompData(AUDIT_ARCH_I386, 21 /* i386 mount */))).toBe(SECCOMP_RET_KILL_PROCESS);
    expect(runFilter(filter, seccompData(AUDIT_ARCH_I386, 3 /* i386 read */))).toBe(SECCOMP_RET_KILL_PROCESS);
  });

  it("is a well-formed program: 8-byte instructions, every jump inside it", () => {
    expect(filter.length % 8).toBe(0);
    const count = filter.length / 8;
    for (let pc = 0; pc < count; pc++) {
      const code = filter.readUInt16LE(pc * 8);
      if ((code & 0x07) === 0x05) {
        expect(pc + 1 + filter.readUInt8(pc * 8 + 2)).toBeLessThan(count);
        expect(pc + 1 + filter.readUInt8(pc * 8 + 3)).toBeLessThan(count);
      }
    }
    expect(filter.readUInt16LE(filter.length - 8)).toBe(0x06);
  });
});
