import type { ValidateFunction } from "ajv";
import type { ActionDefinition } from "../../protocol/define.js";
import { ActionError, type WireError } from "../../protocol/errors.js";
import type { ActionContext, ActionEntry, ConnectionState, Services } from "../actions/context.js";
import { isOutOfDescriptors, outOfDescriptors } from "../util/descriptors.js";
import { work } from "../watchdog/work.js";
import { nearest } from "./suggest.js";
import { toInvalidRequest } from "./validate.js";

export type Reply = { id?: string | number; ok: true; result: unknown } | { id?: string | number; ok: false; error: WireError };

/** Validates a frame, routes it to its handler, and maps every failure to the wire error shape. */
export class Dispatcher {
  private readonly handlers = new Map<string, ActionEntry>();
  private readonly names: string[];

  constructor(
    definitions: readonly ActionDefinition[],
    entries: readonly ActionEntry[],
    private readonly services: Services,
    /** Each action's request validator (validators.ts: the build's precompiled ones). */
    private readonly validators: ReadonlyMap<string, ValidateFunction>,
    /** Told of every answered request: the action it named, "ok" or the error code, and the ms from frame to reply (the metrics). */
    private readonly observe?: (action: string | undefined, outcome: string, ms: number) => void,
  ) {
    for (const e of entries) this.handlers.set(e.definition.name, e);
    const missing = definitions.filter((d) => !this.handlers.has(d.name)).map((d) => d.name);
    if (missing.length) throw new Error(`actions without a handler: ${missing.join(", ")}`);
    const unvalidated = definitions.filter((d) => !validators.has(d.name)).map((d) => d.name);
    if (unvalidated.length) throw new Error(`actions without a validator: ${unvalidated.join(", ")}`);
    this.names = definitions.map((d) => d.name);
  }

  /** Handles one text frame; never throws. `send` is called with the reply, then afterReply hooks run. */
  async handle(text: string, connection: ConnectionState, send: (reply: Reply) => void): Promise<void> {
    // The watchdog's view: this action is in flight until its reply is sent, and the parts that
    // run synchronously here (parse, validation, the handler up to its first await, the reply's
    // serialisation, the hooks) are timed, so a long turn can name the action that caused it.
    const started = performance.now();
    const unit = work.begin("action ?", connection.id);
    const hooks: Array<() => void> = [];
    let id: string | number | undefined;
    let action: string | undefined;
    let reply: Reply;
    try {
      const request = this.parse(text);
      if (typeof request.id === "string" || typeof request.id === "number") id = request.id;
      unit.request = id;
      if (typeof request.action === "string") {
        action = request.action;
        unit.label = `action ${request.action.slice(0, 100)}`;
      }
      const pending = this.route(request, connection, hooks);
      work.spent(unit, performance.now() - started);
      reply = { ok: true, result: await pending };
    } catch (err) {
      reply = { ok: false, error: this.toWire(err, connection) };
    }
    try {
      work.timed(unit, () => this.reply(reply, id, connection, send, hooks));
    } finally {
      work.end(unit);
    }
    this.observe?.(action, reply.ok ? "ok" : reply.error.code, performance.now() - started);
  }

  private reply(
    reply: Reply,
    id: string | number | undefined,
    connection: ConnectionState,
    send: (reply: Reply) => void,
    hooks: Array<() => void>,
  ): void {
    try {
      send(id === undefined ? reply : { id, ...reply });
    } catch (err) {
      // A result that cannot be serialised is our bug: the client still gets an answer to its id.
      send({ ...(id === undefined ? {} : { id }), ok: false, error: this.toWire(err, connection) });
    }
    for (const hook of hooks) {
      try {
        hook();
      } catch (err) {
        this.services.log.error({ err, conn: connection.id }, "after-reply hook failed");
      }
    }
  }

  private parse(text: string): Record<string, unknown> {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new ActionError("bad_json", `the frame is not valid JSON: ${(err as Error).message}`);
    }
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw new ActionError("bad_json", "a request must be a JSON object");
    return value as Record<string, unknown>;
  }

  private async route(request: Record<string, unknown>, connection: ConnectionState, hooks: Array<() => void>): Promise<unknown> {
    const name = request.action;
    if (typeof name !== "string")
      throw new ActionError("invalid_request", 'every request needs "action": a string naming the action', { path: "/action" });
    const handler = this.handlers.get(name);
    if (!handler) {
      const suggestion = nearest(name, this.names);
      throw new ActionError(
        "unknown_action",
        `no action ${JSON.stringify(name.slice(0, 100))}${suggestion ? `; did you mean ${suggestion}?` : ""}`,
        {
          path: "/action",
          details: suggestion ? { suggestion } : {},
        },
      );
    }
    if (handler.definition.scope === "manage" && connection.scope !== "manage") {
      throw new ActionError("forbidden", `${name} needs a manage token; this connection's token has scope ${connection.scope}`);
    }
    const validate = this.validators.get(name)!;
    if (!validate(request)) throw toInvalidRequest(name, validate.errors, request);
    const { id: _id, action: _action, ...params } = request;
    this.services.activity.touch();
    const services = this.services;
    let log: ActionContext["log"] | undefined;
    const ctx: ActionContext = {
      services,
      connection,
      // A child logger costs more than most handlers; made only for handlers that log.
      get log() {
        return (log ??= services.log.child({ conn: connection.id, action: name }));
      },
      afterReply: (fn) => hooks.push(fn),
    };
    return handler.handler(params as never, ctx);
  }

  private toWire(err: unknown, connection: ConnectionState): WireError {
    if (err instanceof ActionError) return err.toWire();
    if (isOutOfDescriptors(err)) return outOfDescriptors(err).toWire();
    this.services.log.error({ err, conn: connection.id }, "action failed unexpectedly");
    return { code: "internal", message: `internal error: ${(err as Error)?.message ?? String(err)}` };
  }
}
