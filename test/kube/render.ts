// deploy/kubernetes/sandbox.yaml as a provider's templating would give it to `podman kube play` on
// this machine: the sandbox's own name for `sbx-123`, the image built here, the ports published on
// loopback, public addresses that name this machine's published port, and the offline nixpkgs
// stand-in mounted in. Everything else is the manifest as it is.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments, stringify } from "yaml";

const ROOT = new URL("../../", import.meta.url).pathname;
export const SANDBOX_YAML = join(ROOT, "deploy/kubernetes/sandbox.yaml");
/** The name the repository's manifest uses, replaced by each sandbox's. */
const EXAMPLE = "sbx-123";

export interface RenderOptions {
  /** The sandbox's name (a DNS label): `hotline-<id>` is its pod, `hotline-<id>-home` its volume. */
  id: string;
  image: string;
  /** Host ports on 127.0.0.1 for the daemon's HTTP/WebSocket port and its SSH port. */
  httpPort: number;
  sshPort: number;
  /** The token its Secret holds. */
  token: string;
  /** The public host name (resolved to 127.0.0.1 by the test: curl --resolve, Chromium's resolver rules). */
  publicHost: string;
  /**
   * A warm sandbox, as agent-sandbox.yaml's template makes one: no token Secret (the daemon makes its
   * own token in the home until a provider binds the sandbox by writing the project's over it).
   */
  warm?: boolean;
  /** Host directories mounted read-only: the nixpkgs stand-in and a Nix registry file's directory. */
  standin: string;
  nixConfigDir: string;
}

type Obj = Record<string, any>;

/** Every string of a YAML tree with `from` replaced by `to`. */
function rename(node: unknown, from: string, to: string): unknown {
  if (typeof node === "string") return node.split(from).join(to);
  if (Array.isArray(node)) return node.map((n) => rename(n, from, to));
  if (node && typeof node === "object") return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, rename(v, from, to)]));
  return node;
}

/** The multi-document YAML to play, and the names podman gives what it makes. */
export function renderSandbox(o: RenderOptions): {
  yaml: string;
  /** The same without the PersistentVolumeClaim, to play again once its volume exists (podman 4.3 refuses an existing one). */
  yamlAgain: string;
  pod: string;
  container: string;
  homeVolume: string;
  /** The Secret's name (and the volume podman makes of it); none for a warm sandbox. */
  secret: string | undefined;
} {
  let docs = parseAllDocuments(readFileSync(SANDBOX_YAML, "utf8")).map((d) => rename(d.toJS(), EXAMPLE, o.id) as Obj);
  const byKind = (kind: string): Obj => docs.find((d) => d.kind === kind)!;
  const secret = byKind("Secret").metadata.name as string;
  byKind("Secret").data.token = Buffer.from(o.token).toString("base64");
  const pod = byKind("Pod");
  if (o.warm) {
    docs = docs.filter((d) => d.kind !== "Secret");
    pod.spec.volumes = pod.spec.volumes.filter((v: Obj) => v.name !== "token");
    pod.spec.containers[0].volumeMounts = pod.spec.containers[0].volumeMounts.filter((m: Obj) => m.name !== "token");
    pod.spec.containers[0].env = pod.spec.containers[0].env.filter((e: Obj) => e.name !== "HOTLINE_TOKEN_FILE");
  }
  for (const c of [...pod.spec.initContainers, ...pod.spec.containers]) {
    c.image = o.image;
    c.imagePullPolicy = "Never";
  }
  const main = pod.spec.containers[0];
  const published: Record<string, number> = { http: o.httpPort, ssh: o.sshPort };
  for (const port of main.ports) Object.assign(port, { hostPort: published[port.name], hostIP: "127.0.0.1" });
  const publicUrl = `http://${o.publicHost}:${o.httpPort}`;
  const set: Record<string, string> = {
    HOTLINE_PUBLIC_URL: publicUrl,
    HOTLINE_PREVIEW_URL: `http://{port}.${o.publicHost}:${o.httpPort}`,
    HOTLINE_PUBLIC_SSH: `127.0.0.1:${o.sshPort}`,
    // The stand-in nixpkgs and a Nix that asks no binary cache: nothing leaves this machine.
    HOTLINE_NIXPKGS: "path:/opt/standin",
    NIX_CONFIG: "substituters =\nflake-registry = /opt/test-nix/registry.json\nconnect-timeout = 2",
  };
  for (const e of main.env) if (e.name in set) e.value = set[e.name];
  for (const name of Object.keys(set)) if (!main.env.some((e: Obj) => e.name === name)) main.env.push({ name, value: set[name] });
  // Podman 4.3 names an emptyDir's volume after it ("nix", "tmp"): pods played at once would share
  // them, so each sandbox's get its own name (Kubernetes gives every pod its own emptyDirs anyway).
  for (const v of pod.spec.volumes) if (v.emptyDir) v.name = `${o.id}-${v.name}`;
  for (const c of [...pod.spec.initContainers, ...pod.spec.containers])
    for (const m of c.volumeMounts) if (pod.spec.volumes.some((v: Obj) => v.name === `${o.id}-${m.name}`)) m.name = `${o.id}-${m.name}`;
  // Podman 4.3 removes a "once" init container right after it ran, racing its exit ("cannot remove
  // container … as it is running"), and leaves behind the anonymous volume it made for the image's
  // `VOLUME /home/agent`: an "always" init container runs at each start of the pod, as Kubernetes's do,
  // and goes (with its volume) when the pod does.
  pod.metadata.annotations = { ...pod.metadata.annotations, "io.podman.annotations.init.container.type": "always" };
  main.volumeMounts.push(
    { name: "standin", mountPath: "/opt/standin", readOnly: true },
    { name: "test-nix", mountPath: "/opt/test-nix", readOnly: true },
  );
  pod.spec.volumes.push(
    { name: "standin", hostPath: { path: o.standin, type: "Directory" } },
    { name: "test-nix", hostPath: { path: o.nixConfigDir, type: "Directory" } },
  );
  return {
    yaml: docs.map((d) => stringify(d)).join("---\n"),
    yamlAgain: docs
      .filter((d) => d.kind !== "PersistentVolumeClaim")
      .map((d) => stringify(d))
      .join("---\n"),
    pod: pod.metadata.name,
    container: `${pod.metadata.name}-${main.name}`,
    homeVolume: byKind("PersistentVolumeClaim").metadata.name,
    secret: o.warm ? undefined : secret,
  };
}
