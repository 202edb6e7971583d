import type { Dispatcher } from "undici";
import Agent from "undici/lib/dispatcher/agent.js";
import requestOn from "undici/lib/api/api-request.js";

/**
 * undici's request() without the rest of undici. Its index loads the whole package (fetch,
 * WebSocket, caches, mocks: ~1 MB of code) in the one turn of the first download — 115 ms on a CPU
 * on a busy 2-core machine, over the daemon's 100 ms budget — where the Agent and the request API
 * alone take a third of that. What index.js's request() does with a URL is done here the same way:
 * the dispatcher given, or one shared Agent; origin and path from the URL.
 */
let shared: Dispatcher | undefined;

export type RequestOptions = Omit<Dispatcher.RequestOptions, "origin" | "path" | "method"> & {
  method: Dispatcher.HttpMethod;
  dispatcher?: Dispatcher;
};

export function request(url: URL, options: RequestOptions): Promise<Dispatcher.ResponseData> {
  const { dispatcher, ...rest } = options;
  shared ??= new Agent();
  return requestOn.call(dispatcher ?? shared, { ...rest, origin: url.origin, path: `${url.pathname}${url.search}` });
}
