import { ActionError } from "../../protocol/errors.js";
import { readWorkspaceFile } from "./files.js";

/** An exact nixpkgs: the flake URL written into generated flakes, and what its lock says it resolved to. */
export interface NixpkgsPin {
  url: string;
  rev?: string;
  narHash?: string;
  lastModified?: number;
}

/** Turns the configured default (`--nixpkgs` / HOTLINE_NIXPKGS) into a pin; the rev is read from github-style refs. */
export function pinFromRef(ref: string): NixpkgsPin {
  const pin: NixpkgsPin = { url: ref };
  const github = /^github:[^/]+\/[^/]+\/([0-9a-f]{40})$/.exec(ref);
  const rev = github?.[1] ?? /[?&]rev=([0-9a-f]{40})/.exec(ref)?.[1];
  if (rev) pin.rev = rev;
  return pin;
}

interface LockNode {
  inputs?: Record<string, string | string[]>;
  locked?: { rev?: string; narHash?: string; lastModified?: number };
}

/** What a flake.lock locked the root's `input` to, or undefined when the lock or the input is missing. */
export function readLockedInput(lockPath: string, input = "nixpkgs"): Omit<NixpkgsPin, "url"> | undefined {
  let lock: { root?: string; nodes?: Record<string, LockNode> };
  try {
    lock = JSON.parse(readWorkspaceFile(lockPath)?.toString("utf8") ?? "null") ?? {};
  } catch (err) {
    if (err instanceof ActionError) throw err;
    return undefined;
  }
  const root = lock.nodes?.[lock.root ?? "root"];
  const target = root?.inputs?.[input];
  if (typeof target !== "string") return undefined;
  const locked = lock.nodes?.[target]?.locked;
  if (!locked) return undefined;
  const out: Omit<NixpkgsPin, "url"> = {};
  if (locked.rev) out.rev = locked.rev;
  if (locked.narHash) out.narHash = locked.narHash;
  if (typeof locked.lastModified === "number") out.lastModified = locked.lastModified;
  return out;
}
