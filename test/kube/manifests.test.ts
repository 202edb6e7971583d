// Every manifest under deploy/kubernetes/ is checked as `kubectl apply --dry-run=client` would
// (schemas.ts), and against what the daemon needs of it: the probes' paths, the security context
// the issue asks for, names that point at each other, and public addresses the daemon accepts and
// the Ingress routes. The SandboxTemplate's pod must stay sandbox.yaml's pod but for the listed
// differences, so the two cannot drift.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { loadConfig } from "../../daemon/config.js";
import { checkPreviewTemplate } from "../../daemon/preview/hosts.js";
import { AGENT_SANDBOX, coreModel, crdSubValidator, crdValidator, DNS_LABEL, DNS_SUBDOMAIN, describeErrors } from "./schemas.js";

const DEPLOY = join(new URL("../../", import.meta.url).pathname, "deploy/kubernetes");

type Obj = Record<string, any>;

function load(file: string): Obj[] {
  const docs = parseAllDocuments(readFileSync(join(DEPLOY, file), "utf8"));
  for (const d of docs) if (d.errors.length) throw new Error(`${file}: ${d.errors.map((e) => e.message).join("; ")}`);
  return docs.map((d) => d.toJS() as Obj).filter((o) => o !== null);
}

const FILES = readdirSync(DEPLOY).filter((f) => f.endsWith(".yaml"));
const all = FILES.flatMap((file) => load(file).map((object) => ({ file, object })));
const find = (kind: string, file?: string): Obj => {
  const hit = all.find((o) => o.object.kind === kind && (file === undefined || o.file === file));
  if (!hit) throw new Error(`no ${kind}${file ? ` in ${file}` : ""}`);
  return hit.object;
};

const SANDBOX_APIS = new Set(AGENT_SANDBOX.kinds.map((k) => `${k.apiVersion}/${k.kind}`));

describe("deploy/kubernetes manifests", () => {
  it("has the plain sandbox, its Ingress, and agent-sandbox's template, warm pool and claim", () => {
    expect(FILES.sort()).toEqual(["agent-sandbox.yaml", "claim.yaml", "ingress.yaml", "sandbox.yaml"]);
    expect(all.map((o) => `${o.file}:${o.object.kind}`)).toEqual(
      expect.arrayContaining([
        "sandbox.yaml:Secret",
        "sandbox.yaml:PersistentVolumeClaim",
        "sandbox.yaml:Pod",
        "sandbox.yaml:Service",
        "ingress.yaml:Ingress",
        "ingress.yaml:Service",
        "agent-sandbox.yaml:SandboxTemplate",
        "agent-sandbox.yaml:SandboxWarmPool",
        "claim.yaml:SandboxClaim",
      ]),
    );
    expect(AGENT_SANDBOX).toMatchObject({ source: "https://github.com/kubernetes-sigs/agent-sandbox", tag: "v0.5.6" });
    expect(AGENT_SANDBOX.commit).toMatch(/^[0-9a-f]{40}$/);
  });

  for (const { file, object } of all) {
    it(`${file}: ${object.kind} ${object.metadata?.name} is valid against its schema`, async () => {
      expect(object.metadata?.name).toMatch(DNS_SUBDOMAIN);
      const key = `${object.apiVersion}/${object.kind}`;
      if (SANDBOX_APIS.has(key)) {
        const validate = crdValidator(object.apiVersion, object.kind)!;
        expect(validate(object), describeErrors(validate.errors)).toBe(true);
        return;
      }
      const Model = await coreModel(object.apiVersion, object.kind);
      expect(() => new Model(object).validate()).not.toThrow();
      // Strict fields of the pod and volume claim specs: the CRDs inline Kubernetes' own PodSpec
      // and PersistentVolumeClaimSpec, so their structural schemas refuse a misspelt field.
      if (object.kind === "Pod") {
        const strict = crdSubValidator("Sandbox", ["spec", "podTemplate", "spec"]);
        expect(strict(object.spec), describeErrors(strict.errors)).toBe(true);
      }
      if (object.kind === "PersistentVolumeClaim") {
        const strict = crdSubValidator("Sandbox", ["spec", "volumeClaimTemplates", "[]", "spec"]);
        expect(strict(object.spec), describeErrors(strict.errors)).toBe(true);
      }
    });
  }

  it("the schemas refuse what kubectl would: a misspelt field, a wrong type, an unknown enum value, a claim without its pool", async () => {
    const pod = structuredClone(find("Pod"));
    pod.spec.containers[0].securityContext.readOnlyRootFileSystem = true; // the real one is …Filesystem
    const strict = crdSubValidator("Sandbox", ["spec", "podTemplate", "spec"]);
    expect(strict(pod.spec)).toBe(false);
    expect(describeErrors(strict.errors)).toContain("readOnlyRootFileSystem");
    const Pod = await coreModel("v1", "Pod");
    const typed = structuredClone(find("Pod"));
    typed.spec.containers[0].ports[0].containerPort = "7070";
    expect(() => new Pod(typed).validate()).toThrow(/containerPort/);
    const template = structuredClone(find("SandboxTemplate"));
    template.spec.envVarsInjectionPolicy = "Sometimes";
    const validateTemplate = crdValidator(template.apiVersion, template.kind)!;
    expect(validateTemplate(template)).toBe(false);
    const claim = structuredClone(find("SandboxClaim"));
    delete claim.spec.warmPoolRef;
    const validateClaim = crdValidator(claim.apiVersion, claim.kind)!;
    expect(validateClaim(claim)).toBe(false);
    expect(describeErrors(validateClaim.errors)).toContain("warmPoolRef");
  });

  it("the pod runs as agent, unprivileged, read-only, seccomp RuntimeDefault, with probes on /healthz and /readyz and measured resources", () => {
    for (const spec of [find("Pod").spec, find("SandboxTemplate").spec.podTemplate.spec]) {
      expect(spec.automountServiceAccountToken).toBe(false);
      expect(spec.securityContext).toMatchObject({ runAsUser: 1000, runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
      for (const c of [...spec.initContainers, ...spec.containers]) {
        expect(c.name).toMatch(DNS_LABEL);
        expect(c.securityContext, c.name).toEqual({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ["ALL"] },
        });
        expect(c.resources.limits.memory, c.name).toBeDefined();
      }
      const [main] = spec.containers;
      // A number: podman kube play does not resolve a named port in a probe (it probes port 0).
      expect(main.startupProbe.httpGet).toEqual({ path: "/healthz", port: 7070 });
      expect(main.livenessProbe.httpGet).toEqual({ path: "/healthz", port: 7070 });
      expect(main.readinessProbe.httpGet).toEqual({ path: "/readyz", port: 7070 });
      expect(main.ports).toEqual([
        { name: "http", containerPort: 7070 },
        { name: "ssh", containerPort: 2222 },
      ]);
      // The writable places of a read-only root: the home, the Nix store, /tmp.
      expect(main.volumeMounts.map((m: Obj) => m.mountPath)).toEqual(expect.arrayContaining(["/home/agent", "/nix", "/tmp"]));
      // No credential in the environment: the token is a file.
      for (const e of main.env) expect(e.name).not.toMatch(/TOKEN$|SECRET|PASSWORD/);
    }
  });

  it("names point at each other: the Secret, the claim and the Service's selector in sandbox.yaml, the Ingress's backends", () => {
    const pod = find("Pod");
    const volumes = Object.fromEntries(pod.spec.volumes.map((v: Obj) => [v.name, v]));
    expect(volumes.token.secret.secretName).toBe(find("Secret").metadata.name);
    expect(volumes.home.persistentVolumeClaim.claimName).toBe(find("PersistentVolumeClaim").metadata.name);
    const env = Object.fromEntries(pod.spec.containers[0].env.map((e: Obj) => [e.name, e.value]));
    const tokenMount = pod.spec.containers[0].volumeMounts.find((m: Obj) => m.name === "token");
    expect(env.HOTLINE_TOKEN_FILE).toBe(`${tokenMount.mountPath}/token`);
    expect(Object.keys(find("Secret").data)).toEqual(["token"]);
    const service = find("Service", "sandbox.yaml");
    for (const [k, v] of Object.entries(service.spec.selector)) expect(pod.metadata.labels[k]).toBe(v);
    const ssh = find("Service", "ingress.yaml");
    for (const [k, v] of Object.entries(ssh.spec.selector)) expect(pod.metadata.labels[k]).toBe(v);
    for (const rule of find("Ingress").spec.rules)
      for (const p of rule.http.paths) expect(p.backend.service.name).toBe(service.metadata.name);
    expect(find("SandboxWarmPool").spec.sandboxTemplateRef.name).toBe(find("SandboxTemplate").metadata.name);
    expect(find("SandboxClaim").spec.warmPoolRef.name).toBe(find("SandboxWarmPool").metadata.name);
    // A claim's env or volumeClaimTemplates would force a cold start (agent-sandbox's field docs).
    expect(find("SandboxClaim").spec.env).toBeUndefined();
    expect(find("SandboxClaim").spec.volumeClaimTemplates).toBeUndefined();
  });

  it("the public addresses are settings the daemon accepts, and the Ingress routes exactly their hosts", () => {
    const env = Object.fromEntries(find("Pod").spec.containers[0].env.map((e: Obj) => [e.name, e.value as string]));
    const config = loadConfig({}, { HOME: "/home/agent", ...env, HOTLINE_SYSTEM_CONFIG_DIR: "/nonexistent" });
    expect(config.publicUrl).toBe("https://sbx-123.sandboxes.example.com");
    expect(config.tokenFile).toBe("/run/secrets/hotline/token");
    const preview = checkPreviewTemplate(config.previewUrl!);
    const ingress = find("Ingress");
    const hosts = ingress.spec.rules.map((r: Obj) => r.host);
    const publicHost = new URL(config.publicUrl!).hostname;
    expect(hosts).toContain(publicHost);
    // `{port}.<public host>`: one label, what the Ingress's wildcard host matches.
    expect(preview).toMatchObject({ proto: "https", prefix: "", suffix: `.${publicHost}` });
    expect(hosts).toContain(`*.${publicHost}`);
    expect(ingress.spec.tls[0].hosts.sort()).toEqual([...hosts].sort());
    const [sshHost, sshPort] = config.publicSsh!.split(":");
    const ssh = find("Service", "ingress.yaml");
    expect(ssh.metadata.annotations["external-dns.alpha.kubernetes.io/hostname"]).toBe(sshHost);
    expect(ssh.spec.ports[0].port).toBe(Number(sshPort));
  });

  it("the SandboxTemplate's pod is sandbox.yaml's pod but for the token Secret, the home claim and the names from the pod's own", () => {
    const pod = structuredClone(find("Pod").spec);
    const template = structuredClone(find("SandboxTemplate").spec.podTemplate.spec);
    // The plain pod's token Secret and home claim; the template's home is its volumeClaimTemplate.
    pod.volumes = pod.volumes.filter((v: Obj) => v.name !== "token" && v.name !== "home");
    pod.containers[0].volumeMounts = pod.containers[0].volumeMounts.filter((m: Obj) => m.name !== "token");
    expect(find("SandboxTemplate").spec.volumeClaimTemplates.map((t: Obj) => t.metadata.name)).toEqual(["home"]);
    const podEnv = pod.containers[0].env;
    const templateEnv = template.containers[0].env;
    delete pod.containers[0].env;
    delete template.containers[0].env;
    expect(template).toEqual(pod);
    expect(podEnv.map((e: Obj) => e.name)).toEqual([
      "HOTLINE_TOKEN_FILE",
      "HOTLINE_PUBLIC_URL",
      "HOTLINE_PREVIEW_URL",
      "HOTLINE_PUBLIC_SSH",
    ]);
    expect(templateEnv).toEqual([
      { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
      ...podEnv
        .filter((e: Obj) => e.name !== "HOTLINE_TOKEN_FILE")
        .map((e: Obj) => ({ name: e.name, value: e.value.replace("sbx-123", "$(POD_NAME)") })),
    ]);
  });
});
