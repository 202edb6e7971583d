import { execNix } from "./runners/nix-cli.js";

const ARCH: Record<string, string> = { x64: "x86_64", arm64: "aarch64", ia32: "i686", riscv64: "riscv64" };

/** The Nix system double of this machine, e.g. x86_64-linux. */
export function nixSystem(): string {
  return `${ARCH[process.arch] ?? process.arch}-${process.platform === "darwin" ? "darwin" : process.platform}`;
}

/** `flakes`: whether flakes work with the settings the daemon passes (it enables them itself). */
export type NixProbe = { available: true; version: string; flakes: boolean } | { available: false; reason: string; flakes: false };

export const NIX_INSTALL_ADVICE =
  "Nix is not installed or not on PATH; install it (Debian: apt-get install nix-bin, or the single-user installer from nixos.org); the daemon enables nix-command and flakes itself";

/**
 * Asks `nix --version`, then whether flakes work (`builtins.getFlake` exists only when they do:
 * an old Nix ignores the feature flag). The answer is cached by the caller for the daemon's life.
 */
export async function probeNix(): Promise<NixProbe> {
  let version: string;
  try {
    version = (await execNix("nix", ["--version"], { timeoutMs: 10_000 })).trim().replace(/^nix \(Nix\) /, "");
  } catch {
    return { available: false, reason: NIX_INSTALL_ADVICE, flakes: false };
  }
  const flakes = await execNix("nix", ["eval", "--expr", "builtins ? getFlake"], { timeoutMs: 10_000 }).then(
    (out) => out.trim() === "true",
    () => false,
  );
  return { available: true, version, flakes };
}
