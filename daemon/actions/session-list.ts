import { sessionList } from "../../protocol/actions/session.js";
import { statusOf } from "../sessions/index.js";
import { entry } from "./context.js";

export default entry(sessionList, async (_params, { services }) => ({ sessions: services.sessions.list().map(statusOf) }));
