import { execFile } from "node:child_process";

const ARCH: Record<string, string> = { x64: "x86_64", arm64: "aarch64", ia32: "i686", riscv64: "riscv64" };

/** The Nix system double of this machine, e.g. x86_64-linux. */
export function nixSystem(): string {
  return `${ARCH[process.arch] ?? process.arch}-${process.platform === "darwin" ? "darwin" : process.platform}`;
}

export type NixProbe = { available: true; version: string } | { available: false; reason: string };

export const NIX_INSTALL_ADVICE =
  "Nix is not installed or not on PATH; install it (Debian: apt-get install nix-bin, or the single-user installer from nixos.org) and enable flakes (experimental-features = nix-command flakes)";

/** Asks `nix --version` once; the answer is cached by the caller for the daemon's life. */
export function probeNix(): Promise<NixProbe> {
  return new Promise((resolve) => {
    execFile("nix", ["--version"], { timeout: 10_000 }, (err, stdout) => {
      if (err) resolve({ available: false, reason: NIX_INSTALL_ADVICE });
      else resolve({ available: true, version: stdout.trim().replace(/^nix \(Nix\) /, "") });
    });
  });
}
