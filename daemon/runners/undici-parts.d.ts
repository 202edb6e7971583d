// Types of the two undici modules daemon/runners/undici-request.ts loads on their own (the package
// types its index only; these are the modules behind its Agent and its request()).
declare module "undici/lib/dispatcher/agent.js" {
  const Agent: typeof import("undici").Agent;
  export default Agent;
}
declare module "undici/lib/api/api-request.js" {
  type Dispatcher = import("undici").Dispatcher;
  const request: (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;
  export default request;
}
