import { sessionStatus } from "../../protocol/actions/session.js";
import { statusWithProcesses } from "../sessions/index.js";
import { entry } from "./context.js";

export default entry(sessionStatus, async (params, { services }) => ({
  session: await statusWithProcesses(services.sessions.find(params.session)),
}));
