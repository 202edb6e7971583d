import { sessionOpen } from "../../protocol/actions/session.js";
import { statusOf } from "../sessions/index.js";
import { entry } from "./context.js";

export default entry(sessionOpen, async (params, { services }) => {
  const { session, resumed } = await services.sessions.openSession(params);
  return resumed ? { session: statusOf(session), resumed } : { session: statusOf(session) };
});
