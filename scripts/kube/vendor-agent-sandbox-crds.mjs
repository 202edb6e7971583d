#!/usr/bin/env node
// Copies the OpenAPI schemas of kubernetes-sigs/agent-sandbox's CRDs (the v1beta1 version of each)
// into deploy/kubernetes/schemas/agent-sandbox.json, for test/kube/manifests.test.ts.
//
//   node scripts/kube/vendor-agent-sandbox-crds.mjs GIT_DIR TAG
//
// GIT_DIR is a clone (bare or not) of https://github.com/kubernetes-sigs/agent-sandbox; TAG a release
// tag (v0.5.6). `description` texts are dropped (they are most of the bytes and no rule); everything
// else is kept as the CRD states it, with the source, tag, commit and path named in the file.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";

const [gitDir, tag] = process.argv.slice(2);
if (!gitDir || !tag) {
  process.stderr.write("usage: vendor-agent-sandbox-crds.mjs GIT_DIR TAG\n");
  process.exit(2);
}
const VERSION = "v1beta1";
const FILES = [
  "k8s/crds/agents.x-k8s.io_sandboxes.yaml",
  "k8s/crds/extensions.agents.x-k8s.io_sandboxtemplates.yaml",
  "k8s/crds/extensions.agents.x-k8s.io_sandboxwarmpools.yaml",
  "k8s/crds/extensions.agents.x-k8s.io_sandboxclaims.yaml",
];
const git = (...args) => execFileSync("git", ["-C", gitDir, ...args], { encoding: "utf8", maxBuffer: 64 << 20 });
const commit = git("rev-list", "-n", "1", tag).trim();

function dropDescriptions(node) {
  if (Array.isArray(node)) return node.map(dropDescriptions);
  if (node === null || typeof node !== "object") return node;
  const out = {};
  for (const [key, value] of Object.entries(node)) if (key !== "description") out[key] = dropDescriptions(value);
  return out;
}

const kinds = FILES.map((path) => {
  const crd = parse(git("show", `${tag}:${path}`));
  const version = crd.spec.versions.find((v) => v.name === VERSION);
  if (!version) throw new Error(`${path} at ${tag} has no ${VERSION}`);
  return {
    apiVersion: `${crd.spec.group}/${VERSION}`,
    kind: crd.spec.names.kind,
    path,
    openAPIV3Schema: dropDescriptions(version.schema.openAPIV3Schema),
  };
});
const out = {
  source: "https://github.com/kubernetes-sigs/agent-sandbox",
  tag,
  commit,
  note: "The v1beta1 openAPIV3Schema of each CRD, copied by scripts/kube/vendor-agent-sandbox-crds.mjs with `description` texts dropped. Apache-2.0, The Kubernetes Authors.",
  kinds,
};
const target = join(new URL("../..", import.meta.url).pathname, "deploy/kubernetes/schemas/agent-sandbox.json");
writeFileSync(target, `${JSON.stringify(out)}\n`);
process.stdout.write(`${target}: ${kinds.map((k) => k.kind).join(", ")} from ${tag} (${commit})\n`);
