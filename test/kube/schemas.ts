// Validation of Kubernetes objects, as `kubectl apply --dry-run=client` does before it sends them:
// the core kinds against the Kubernetes OpenAPI (the kubernetes-models package: its validators are
// generated from it), agent-sandbox's kinds against their CRDs' OpenAPI (vendored in
// deploy/kubernetes/schemas/agent-sandbox.json, release and commit named there), strictly: a field
// a structural schema does not name is refused, as strict field validation does.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";

const ROOT = new URL("../../", import.meta.url).pathname;

export interface Vendored {
  source: string;
  tag: string;
  commit: string;
  kinds: Array<{ apiVersion: string; kind: string; path: string; openAPIV3Schema: OpenApi }>;
}

type OpenApi = { [key: string]: unknown };

export const AGENT_SANDBOX = JSON.parse(readFileSync(join(ROOT, "deploy/kubernetes/schemas/agent-sandbox.json"), "utf8")) as Vendored;

/**
 * A CRD's OpenAPI v3 schema as JSON Schema: `nullable`, int-or-string, preserved unknown fields,
 * and `additionalProperties: false` wherever the schema lists properties (a structural schema
 * prunes, and strict validation refuses, any other field). CEL rules (x-kubernetes-validations) are
 * the API server's and are not checked here.
 */
export function toJsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toJsonSchema);
  if (node === null || typeof node !== "object") return node;
  const s = node as OpenApi;
  const out: OpenApi = {};
  for (const [key, value] of Object.entries(s)) {
    if (key.startsWith("x-kubernetes-") || key === "nullable" || key === "format") continue;
    if (key === "properties" || key === "patternProperties")
      out[key] = Object.fromEntries(Object.entries(value as OpenApi).map(([k, v]) => [k, toJsonSchema(v)]));
    else out[key] = toJsonSchema(value);
  }
  if (s["x-kubernetes-int-or-string"] === true) {
    delete out.type;
    if (!out.anyOf) out.anyOf = [{ type: "integer" }, { type: "string" }];
  }
  if (s["x-kubernetes-embedded-resource"] === true && out.properties) {
    // An embedded object carries apiVersion, kind and metadata even when the schema does not list them.
    out.properties = {
      apiVersion: { type: "string" },
      kind: { type: "string" },
      metadata: { type: "object" },
      ...(out.properties as OpenApi),
    };
  }
  if (out.properties && out.additionalProperties === undefined && s["x-kubernetes-preserve-unknown-fields"] !== true)
    out.additionalProperties = false;
  if (s.nullable === true && typeof out.type === "string") out.type = [out.type, "null"];
  return out;
}

const ajv = new Ajv({ strict: false, allErrors: true });
const crdValidators = new Map<string, ValidateFunction>();
for (const k of AGENT_SANDBOX.kinds) crdValidators.set(`${k.apiVersion}/${k.kind}`, ajv.compile(toJsonSchema(k.openAPIV3Schema) as object));

/** The validator of an agent-sandbox kind, by apiVersion and kind. */
export function crdValidator(apiVersion: string, kind: string): ValidateFunction | undefined {
  return crdValidators.get(`${apiVersion}/${kind}`);
}

/** The subschema at a path of properties/items of a vendored CRD (e.g. spec.podTemplate.spec), compiled strictly. */
export function crdSubValidator(kind: string, path: string[]): ValidateFunction {
  let node = AGENT_SANDBOX.kinds.find((k) => k.kind === kind)!.openAPIV3Schema as OpenApi;
  for (const step of path) node = (step === "[]" ? node.items : (node.properties as OpenApi)[step]) as OpenApi;
  return ajv.compile(toJsonSchema(node) as object);
}

export function describeErrors(errors: readonly ErrorObject[] | null | undefined): string {
  return (errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ""}`).join("; ");
}

/** The kubernetes-models class for a core kind (apiVersion + kind), whose validate() throws on an invalid object. */
export async function coreModel(
  apiVersion: string,
  kind: string,
): Promise<{ validate(): void } & (new (data: object) => { validate(): void })> {
  const group = apiVersion.includes("/") ? apiVersion : `${apiVersion}`;
  const module = (await import(`kubernetes-models/${group}/${kind}`)) as Record<string, unknown>;
  const model = module[kind];
  if (typeof model !== "function") throw new Error(`kubernetes-models has no ${apiVersion} ${kind}`);
  return model as never;
}

/** DNS-1123 subdomain (object names) and label (container, port and volume names). */
export const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const DNS_LABEL = /^(?=.{1,63}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
