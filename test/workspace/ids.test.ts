import { describe, expect, it } from "vitest";
import { ActionError } from "../../protocol/errors.js";
import { checkId, checkRefArgument, isValidId } from "../../daemon/workspace/ids.js";
import { WorkspaceLayout } from "../../daemon/workspace/layout.js";
import { formatEnvFile, quoteEnvValue } from "../../daemon/workspace/env-file.js";
import { checkCloneUrl, maskUrlCredentials } from "../../daemon/workspace/source-url.js";

const HOSTILE = [
  "",
  ".",
  "..",
  "../etc",
  "a/../../b",
  "a/b",
  "a\\b",
  ".hidden",
  "-rf",
  "--upload-pack=x",
  "a..b",
  "x.lock",
  "X.LOCK",
  "trail.",
  "a b",
  "a\nb",
  "a\0b",
  "tab\t",
  "é",
  "a:b",
  "a*",
  "a~1",
  "a^",
  "a@{1}",
  "a".repeat(65),
  "/abs",
];

describe("id grammar", () => {
  it.each(HOSTILE)("refuses %j with invalid_request at the field's path", (id) => {
    expect(isValidId(id)).toBe(false);
    let caught: unknown;
    try {
      checkId(id, "task", "/task");
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ActionError);
    expect((caught as ActionError).code).toBe("invalid_request");
    expect((caught as ActionError).path).toBe("/task");
  });

  it.each(["api", "default", "fix-login-42", "v1.2", "A_b-9", "7", "a".repeat(64)])("accepts %j", (id) => {
    expect(checkId(id, "repo", "/repo")).toBe(id);
  });

  it("keeps every layout path inside the root and refuses hostile ids there too", () => {
    const layout = new WorkspaceLayout("/workspace");
    expect(layout.clonePath("api")).toBe("/workspace/project/repos/api/repo");
    expect(layout.worktreePath("t1")).toBe("/workspace/tasks/t1/repo");
    expect(layout.branch("t1")).toBe("task-t1");
    expect(() => layout.worktreePath("../../etc")).toThrow(ActionError);
    expect(() => layout.clonePath("..")).toThrow(/repo id/);
    expect(() => new WorkspaceLayout("relative/root")).toThrow(/absolute/);
  });

  it("refuses refs that could read as options, ranges or rev:path", () => {
    for (const ref of ["-x", "--output=/tmp/x", "a..b", "HEAD:secret", "a b", "x\n"]) {
      expect(() => checkRefArgument(ref, "/ref")).toThrow(ActionError);
    }
    for (const ref of ["main", "HEAD~1", "v1.2", "origin/main", "0123abcd"]) expect(checkRefArgument(ref, "/ref")).toBe(ref);
  });
});

describe(".env formatting", () => {
  it("writes bare, single-quoted and double-quoted values that sh reads back literally", () => {
    expect(quoteEnvValue("A", "plain-1.2/x:y@z")).toBe("plain-1.2/x:y@z");
    expect(quoteEnvValue("A", "has space $HOME `x` \\n")).toBe("'has space $HOME `x` \\n'");
    expect(quoteEnvValue("A", "it's")).toBe(`"it's"`);
    expect(quoteEnvValue("A", "")).toBe("''");
    expect(formatEnvFile({ B: "2", A: "1" })).toMatch(/\nA=1\nB=2\n$/);
  });

  it("refuses newlines, NUL, unquotable values and bad names without echoing the value", () => {
    const secret = "s3cr3t-value";
    for (const [name, value] of [
      ["A", `${secret}\nB=1`],
      ["A", `${secret}\0`],
      ["A", `${secret}\r`],
      ["A", `it's "${secret}"`],
    ] as const) {
      let caught: ActionError | undefined;
      try {
        quoteEnvValue(name, value);
      } catch (error) {
        caught = error as ActionError;
      }
      expect(caught?.code).toBe("invalid_request");
      expect(caught?.path).toBe("/values/A");
      expect(caught?.message).not.toContain(secret);
    }
    for (const name of ["1A", "A-B", "A B", "", "A=B", "É"]) expect(() => formatEnvFile({ [name]: "x" })).toThrow(ActionError);
  });
});

describe("clone addresses", () => {
  it("accepts the usual forms", () => {
    for (const url of ["https://github.com/o/r.git", "ssh://git@host/o/r", "git@github.com:o/r.git", "file:///srv/r.git", "git://host/r"]) {
      expect(checkCloneUrl(url)).toBe(url);
    }
  });

  it("refuses credentials, transport helpers, options and other schemes", () => {
    for (const url of [
      "https://user:tok@github.com/o/r",
      "https://ghp_token@github.com/o/r",
      "ext::sh -c touch% /tmp/pwned",
      "fd::17",
      "-uhelp",
      "ftp://h/r",
      "a\nb",
      "relative/dir",
    ]) {
      expect(() => checkCloneUrl(url), url).toThrow(ActionError);
    }
    expect(maskUrlCredentials("https://u:p@h/r")).toBe("https://***@h/r");
    expect(maskUrlCredentials("ssh://git@h/r")).toBe("ssh://git@h/r");
  });
});
