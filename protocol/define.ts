import type { Static, TObject, TSchema } from "@sinclair/typebox";

/** Who may call an action: `observe` tokens read state and output; `manage` tokens do everything. */
export type Scope = "manage" | "observe";

/** One action's contract: the flat request fields and the result, both JSON Schema. */
export interface ActionDefinition<P extends TObject = TObject, R extends TSchema = TSchema, N extends string = string> {
  /** Kept as its literal type, so the registry in protocol/index.ts can type requests by name. */
  name: N;
  scope: Scope;
  summary: string;
  params: P;
  result: R;
}

/** Declares an action; the registry in protocol/index.ts lists every one explicitly. */
export function defineAction<N extends string, P extends TObject, R extends TSchema>(
  def: ActionDefinition<P, R, N>,
): ActionDefinition<P, R, N> {
  return def;
}

export type ParamsOf<D> = D extends ActionDefinition<infer P, TSchema> ? Static<P> : never;
export type ResultOf<D> = D extends ActionDefinition<TObject, infer R> ? Static<R> : never;
