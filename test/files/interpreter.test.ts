import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ActionError } from "../../protocol/errors.js";
import { chooseInterpreter, parseShebang } from "../../daemon/runners/interpreter.js";
import { tempDir } from "./helpers.js";

async function script(dir: string, name: string, text: string): Promise<string> {
  const p = join(dir, name);
  await writeFile(p, text);
  return p;
}

describe("chooseInterpreter", () => {
  it("uses the named interpreter over the shebang and the extension", async () => {
    const dir = await tempDir();
    const p = await script(dir, "x.py", "#!/bin/bash\necho\n");
    expect(await chooseInterpreter(p, "sh", ["a", "b c"])).toEqual({ interpreter: "sh", source: "param", argv: ["sh", p, "a", "b c"] });
  });

  it("follows the shebang, with /usr/bin/env, -S and flags", async () => {
    const dir = await tempDir();
    const cases: [string, string[]][] = [
      ["#!/bin/bash\n", ["bash"]],
      ["#!/bin/sh -e\n", ["sh", "-e"]],
      ["#!/usr/bin/env python3\r\nprint(1)", ["python3"]],
      ["#! /usr/bin/env -S bash -eu\n", ["bash", "-eu"]],
      ["#!/usr/bin/python3 -u\n", ["python3", "-u"]],
    ];
    for (const [i, [text, head]] of cases.entries()) {
      const p = await script(dir, `s${i}.txt`, text);
      const choice = await chooseInterpreter(p, undefined, ["x"]);
      expect(choice.source).toBe("shebang");
      expect(choice.argv).toEqual([...head, p, "x"]);
    }
  });

  it("falls back to the extension", async () => {
    const dir = await tempDir();
    const sh = await script(dir, "build.sh", "echo hi\n");
    const py = await script(dir, "tool.PY", "print(1)\n");
    expect(await chooseInterpreter(sh, undefined)).toMatchObject({ interpreter: "bash", source: "extension" });
    expect(await chooseInterpreter(py, undefined)).toMatchObject({ interpreter: "python3", source: "extension" });
  });

  it("refuses other interpreters, other shebangs and unknown scripts with invalid_request", async () => {
    const dir = await tempDir();
    const zsh = await script(dir, "a.sh", "#!/bin/zsh\n");
    const plain = await script(dir, "a.rb", "puts 1\n");
    await chmod(plain, 0o755);
    const errors = [
      await chooseInterpreter(plain, "ruby").catch((e: unknown) => e),
      await chooseInterpreter(zsh, undefined).catch((e: unknown) => e),
      await chooseInterpreter(plain, undefined).catch((e: unknown) => e),
    ] as ActionError[];
    for (const e of errors) {
      expect(e).toBeInstanceOf(ActionError);
      expect(e.code).toBe("invalid_request");
    }
    expect(errors[0]!.path).toBe("/interpreter");
    expect(errors[1]!.message).toContain("#!/bin/zsh");
    expect(errors[2]!.message).toMatch(/pass "interpreter"/);
    const missing = (await chooseInterpreter(join(dir, "nope.sh"), undefined).catch((e: unknown) => e)) as ActionError;
    expect(missing.code).toBe("not_found");
  });

  it("parses shebang lines", () => {
    expect(parseShebang("echo")).toBeNull();
    expect(parseShebang("#!/usr/bin/env FOO=1 bash\n")).toMatchObject({ program: "bash" });
    expect(parseShebang("#!/bin/bash --posix\n")).toMatchObject({ program: "bash", flags: [] });
  });
});
