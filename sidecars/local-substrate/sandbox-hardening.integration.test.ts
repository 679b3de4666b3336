/**
 * The local substrate's sandbox hardening, observed from inside a real guest (issue 12, item 8):
 * the guest runs under a seccomp filter (Seccomp: 2 in /proc/self/status), cannot create user,
 * mount or network namespaces (`unshare`), cannot mount, and every syscall on the filter's list —
 * made directly with perl's `syscall` builtin — answers EPERM, while ordinary work (fork, threads,
 * node, git, tar) still runs. The image binds the toolchain paths it declares, never all of host
 * /usr: /usr/local of the host is not there. The filter program's semantics are unit-tested in
 * seccomp-filter.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DENIED_SYSCALLS, SYSCALL_NUMBERS } from "./seccomp-filter";
import { startTestSubstrate, type TTestSubstrate } from "./testing/local-substrate-fixture";

let sub: TTestSubstrate;
let id: string;

beforeAll(async () => {
  sub = await startTestSubstrate({});
  id = await sub.startMachine();
});

afterAll(async () => {
  await sub?.cleanup();
});

describe.runIf(process.arch === "x64")("guest sandbox hardening", () => {
  it("runs every guest command under a seccomp filter with no_new_privs", async () => {
    const result = await sub.exec(id, { command: "grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status" });
    expect(result.body.stdout).toMatch(/NoNewPrivs:\s+1/);
    expect(result.body.stdout).toMatch(/Seccomp:\s+2/);
  });

  it("refuses nested namespaces and mounts", async () => {
    for (const command of [
      "unshare --user true",
      "unshare --user --map-root-user true",
      "unshare --mount true",
      "unshare --net true",
      "unshare --pid --fork true",
      "mount -t tmpfs none /tmp",
    ]) {
      const result = await sub.exec(id, { command: `${command}; echo "exit=$?"` });
      expect(result.body.stdout, command).not.toMatch(/exit=0/);
      expect(result.body.stderr, command).toMatch(/Operation not permitted|permission denied|must be superuser/i);
    }
  });

  it("answers EPERM to each refused syscall", async () => {
    const numbers = SYSCALL_NUMBERS.x86_64;
    const calls = DENIED_SYSCALLS.map((name) => `${name}=${numbers[name]}`).join(" ");
    // perl's syscall builtin makes the raw call; every argument 0. $!+0 is errno.
    const script = `for (qw(${calls})) { my ($n, $nr) = split /=/; $! = 0; my $r = syscall($nr, 0, 0, 0, 0, 0, 0); print "$n $r ", $!+0, "\\n"; }`;
    const result = await sub.exec(id, { command: ["perl", "-e", script] });
    expect(result.body.exitCode, result.body.stderr).toBe(0);
    const lines = result.body.stdout.trim().split("\n");
    expect(lines).toHaveLength(DENIED_SYSCALLS.length);
    for (const line of lines) expect(line, line).toMatch(/^\w+ -1 1$/);
    // clone/unshare with a namespace flag refused; ptrace of another process too
    const flags = await sub.exec(id, {
      command: [
        "perl",
        "-e",
        `$!=0; syscall(${numbers.unshare}, 0x10000000); print $!+0, " "; $!=0; syscall(${numbers.clone3}, 0, 0); print $!+0, " "; $!=0; syscall(${numbers.ptrace}, 16, 1, 0, 0); print $!+0, "\\n";`,
      ],
    });
    expect(flags.body.stdout).toBe("1 38 1\n");
  });

  it("still runs ordinary work: processes, threads, node, git and tar", async () => {
    const result = await sub.exec(id, {
      command:
        'cd /workspace && (sleep 0.1 & wait) && node -e \'const {Worker}=require("worker_threads"); new Worker("1",{eval:true}).on("exit",()=>console.log("thread-ok"))\' && git init -q hard && tar -cf hard.tar hard && echo done',
    });
    expect(result.body.exitCode, result.body.stderr).toBe(0);
    expect(result.body.stdout).toMatch(/thread-ok\n(.|\n)*done\n$/);
  });

  it("binds only the toolchain paths the image declares, never all of host /usr", async () => {
    const result = await sub.exec(id, {
      command:
        "test -x /usr/bin/sh && echo has-bin; test -e /usr/local && echo has-local; test -e /usr/src && echo has-src; test -e /usr/include && echo has-include; true",
    });
    expect(result.body.stdout).toBe("has-bin\n");
  });
});
